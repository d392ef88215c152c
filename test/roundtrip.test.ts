import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import * as soap from 'soap';
import request from 'supertest';
import { createTestApp, type TestApp } from './helpers/app';
import { envelope, faultOf, opElement, soap11 } from './helpers/soap';
import { queued } from './helpers/outbox';

/**
 * A node-soap client built from the served ?wsdl calls every operation, on a plain deployment and on
 * one under an IIS virtual directory with its own namespace.
 */
describe.each([
  ['site root, default namespace', {}],
  ['virtual directory, own namespace', { BASE_PATH: '/StudentService', XML_NAMESPACE: 'urn:school:students:v1' }],
])('%s', (_name, env: Record<string, string>) => {
  let t: TestApp;
  let server: Server;
  let base: string;
  beforeAll(async () => {
    t = await createTestApp(env);
    server = createServer(t.app).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}${env.BASE_PATH ?? ''}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await t.close();
  });

  const client = (svc: string) => soap.createClientAsync(`${base}/${svc}.asmx?wsdl`);

  test('the WSDL addresses are where it was fetched from', async () => {
    const c = await client('NotificationNotes');
    const desc = c.describe() as Record<string, unknown>;
    expect(Object.keys(desc.NotificationNotes as object)).toEqual(['NotificationNotesSoap', 'NotificationNotesSoap12']);
    const wsdl = await request(t.app)
      .get(`${env.BASE_PATH ?? ''}/NotificationNotes.asmx?wsdl`)
      .set('Host', 'school.example');
    expect(wsdl.text).toContain(`location="http://school.example${env.BASE_PATH ?? ''}/NotificationNotes.asmx"`);
    expect(wsdl.text).toContain(`targetNamespace="${t.config.xmlNamespace}"`);
  });

  test('GetTokenDevice and GetServerKeyAndSender', async () => {
    const c = await client('PushNotificationMobile');
    const [found] = await c.GetTokenDeviceAsync({ id: 'dev-1004' });
    expect(found.GetTokenDeviceResult).toBe('tok<&>"quoted"');
    const [arabic] = await c.GetTokenDeviceAsync({ id: 'dev-3001' });
    expect(arabic.GetTokenDeviceResult).toBe('رمز-3001');
    const [unknown] = await c.GetTokenDeviceAsync({ id: 'no-such-device' });
    expect(unknown?.GetTokenDeviceResult).toBeUndefined();
    await expect(c.GetServerKeyAndSenderAsync({})).resolves.toBeDefined();
  });

  test('GetStudentSchool', async () => {
    const c = await client('NotificationNotes');
    const [r] = await c.GetStudentSchoolAsync({ school_base_url: 'http://alnoor.school.example', show_active: 49 });
    const rows = r.GetStudentSchoolResult.StudentInfo as { id_student: string; fullName: string }[];
    expect(rows.map((s) => s.id_student)).toEqual(['1001', '1002', '1004']);
    expect(rows[2].fullName).toBe('سارة محمد & <co>');
    const [big] = await c.GetStudentSchoolAsync({ school_base_url: 'http://big.school.example', show_active: 49 });
    expect((big.GetStudentSchoolResult.StudentInfo as unknown[]).length).toBeGreaterThan(100);
  });

  test('AuthCode, GetStudentsMarks, GetAboutUs', async () => {
    await (await client('AuthCodeSending')).AuthCodeAsync({ code: '4821', phone: '+9647701234567' });
    await (await client('GetStudnetsMarks')).GetStudentsMarksAsync({ StudnetID: '1001', SubjectID: 'MATH-7' });
    await (await client('AboutUs')).GetAboutUsAsync({});
    const pending = await queued(t.store);
    expect(pending.some((p) => p.code === '4821')).toBe(true);
  });

  test('the SOAPAction follows the namespace', async () => {
    const ns = t.config.xmlNamespace;
    const path = `${env.BASE_PATH ?? ''}/PushNotificationMobile.asmx`;
    // .NET puts a '/' between a namespace that lacks one and the operation name.
    const action = ns === 'http://tempuri.org/' ? 'http://tempuri.org/GetTokenDevice' : 'urn:school:students:v1/GetTokenDevice';
    const ok = await soap11(t.app, path, `"${action}"`, envelope('1.1', opElement('GetTokenDevice', { id: 'dev-1001' }, ns)));
    expect(ok.status).toBe(200);
    expect(ok.body).toContain(`<GetTokenDeviceResponse xmlns="${ns}">`);
    if (ns !== 'http://tempuri.org/') {
      const withoutSlash = await soap11(
        t.app,
        path,
        `"${ns}GetTokenDevice"`,
        envelope('1.1', opElement('GetTokenDevice', { id: 'dev-1001' }, ns)),
      );
      expect(faultOf(withoutSlash.body).code).toBe('soap:Client');
      const old = await soap11(
        t.app,
        path,
        '"http://tempuri.org/GetTokenDevice"',
        envelope('1.1', opElement('GetTokenDevice', { id: 'dev-1001' })),
      );
      expect(faultOf(old.body).code).toBe('soap:Client');
    }
  });
});
