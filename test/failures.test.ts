import { createApp } from '../src/app';
import type { Store } from '../src/store/store';
import { createTestApp, type TestApp } from './helpers/app';
import { envelope, faultOf, NS, opElement, soap11, soap12 } from './helpers/soap';
import request from 'supertest';

/**
 * A failure inside an operation (the store throwing, with internals in its message) becomes the
 * legacy server fault or 500 text, with a fixed message and nothing internal, and the service goes on.
 */

const INTERNAL = 'Server was unable to process request. ---> An internal error occurred while processing the request.';
const LEAKY = new Error('SQLITE_IOERR: disk I/O error at /var/lib/student-info/data.db in SELECT token FROM devices WHERE id_device = ?');

let t: TestApp;
let failing = true;
let app: Awaited<ReturnType<typeof createApp>>;

beforeAll(async () => {
  t = await createTestApp();
  // The real store, whose reads fail while `failing` is set.
  const store = new Proxy(t.store, {
    get(target, name: keyof Store) {
      const real = target[name];
      if (typeof real !== 'function') return real;
      return (...args: unknown[]) =>
        failing && (name === 'deviceToken' || name === 'studentsOf')
          ? Promise.reject(LEAKY)
          : (real as (...a: unknown[]) => unknown).apply(target, args);
    },
  });
  app = await createApp(t.config, store, { intake: t.sms.intake });
});

afterAll(() => t.close());

const token = (id: string) => opElement('GetTokenDevice', { id });

test('SOAP 1.1: the server fault with the fixed text', async () => {
  const r = await soap11(app, '/PushNotificationMobile.asmx', `"${NS}GetTokenDevice"`, envelope('1.1', token('dev-1001')));
  expect(r.status).toBe(500);
  expect(faultOf(r.body)).toEqual({ code: 'soap:Server', text: INTERNAL });
  expect(r.body).not.toMatch(/SQLITE|SELECT|\/var\/lib|disk/);
});

test('SOAP 1.2: the Receiver fault with the fixed text', async () => {
  const r = await soap12(
    app,
    '/NotificationNotes.asmx',
    envelope('1.2', opElement('GetStudentSchool', { school_base_url: 'x', show_active: '49' })),
  );
  expect(faultOf(r.body)).toEqual({ code: 'soap:Receiver', text: INTERNAL });
});

test('HTTP GET and POST: 500 with the fixed text', async () => {
  const get = await request(app).get('/PushNotificationMobile.asmx/GetTokenDevice?id=dev-1001');
  expect(get.status).toBe(500);
  expect(get.text).toBe(`${INTERNAL}\r\n`);
  const post = await request(app).post('/PushNotificationMobile.asmx/GetTokenDevice').type('form').send('id=dev-1001');
  expect(post.text).toBe(`${INTERNAL}\r\n`);
});

test('the service answers normally once the store does', async () => {
  failing = false;
  const r = await soap11(app, '/PushNotificationMobile.asmx', `"${NS}GetTokenDevice"`, envelope('1.1', token('dev-1001')));
  expect(r.status).toBe(200);
  expect(r.body).toContain('fcm:APA91bH-token-1001');
});
