import request from 'supertest';
import { createTestApp, type TestApp } from './helpers/app';
import { queued } from './helpers/outbox';

/** The HTTP GET/POST rules of wire-notes.md beyond the recorded exchanges. */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const NOTES = '/NotificationNotes.asmx/GetStudentSchool';
const alnoor = 'school_base_url=http%3A%2F%2Falnoor.school.example';

function form(path: string, body: string, type = 'application/x-www-form-urlencoded') {
  return request(t.app).post(path).set('Content-Type', type).send(body);
}

function expectError(res: request.Response, text: string) {
  expect(res.status).toBe(500);
  expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
  expect(res.text).toBe(`${text}\r\n`);
}

test('an absent parameter is an error; an empty one is not', async () => {
  expectError(await request(t.app).get('/AuthCodeSending.asmx/AuthCode?phone=1'), 'Missing parameter: code.');
  expectError(await form('/AuthCodeSending.asmx/AuthCode', 'code=1'), 'Missing parameter: phone.');
  const ok = await request(t.app).get('/AuthCodeSending.asmx/AuthCode?code=&phone=');
  expect(ok.status).toBe(200);
});

test('parameter names match without regard to case; unknown names are ignored', async () => {
  const res = await request(t.app).get(`${NOTES}?SCHOOL_BASE_URL=http%3A%2F%2Falnoor.school.example&Show_Active=1&extra=2`);
  expect(res.status).toBe(200);
  expect(res.text.match(/<StudentInfo>/g)).toHaveLength(3);
});

test('method names match with regard to case', async () => {
  expectError(
    await request(t.app).get('/AboutUs.asmx/getaboutus'),
    'Invalid method name &#39;getaboutus&#39;,  method names are case sensitive.   The method name &#39;GetAboutUs&#39; ' +
      'with the same name but different casing was found.\r\nParameter name: methodName',
  );
  expectError(await form('/AboutUs.asmx/Nope', ''), 'Nope Web Service method name is not valid.');
});

test('show_active must be exactly one character', async () => {
  for (const v of ['', '12']) {
    expectError(
      await request(t.app).get(`${NOTES}?${alnoor}&show_active=${v}`),
      `Cannot convert ${v} to System.Char.\r\nParameter name: type ---> String must be exactly one character long.`,
    );
  }
  const inactive = await request(t.app).get(`${NOTES}?${alnoor}&show_active=0`);
  expect(inactive.text).toContain('<id_student>1003</id_student>');
});

test('POST reads only a form body', async () => {
  expectError(
    await form('/PushNotificationMobile.asmx/GetTokenDevice', 'id=dev-1001', 'text/plain'),
    'Request format is invalid: text/plain.',
  );
  expectError(
    await request(t.app)
      .post('/PushNotificationMobile.asmx/GetTokenDevice?id=dev-1001')
      .set('Content-Type', 'application/x-www-form-urlencoded')
      .send(''),
    'Missing parameter: id.',
  );
  const ok = await form('/PushNotificationMobile.asmx/GetTokenDevice', 'id=dev-3001', 'application/x-www-form-urlencoded; charset=utf-8');
  expect(ok.text).toBe('<?xml version="1.0" encoding="utf-8"?>\r\n<string xmlns="http://tempuri.org/">رمز-3001</string>');
});

test('null, empty and escaped strings', async () => {
  const nil = await request(t.app).get('/PushNotificationMobile.asmx/GetTokenDevice?id=nope');
  expect(nil.text).toContain('xsi:nil="true"');
  const empty = await request(t.app).get('/PushNotificationMobile.asmx/GetTokenDevice?id=dev-empty');
  expect(empty.text).toBe('<?xml version="1.0" encoding="utf-8"?>\r\n<string xmlns="http://tempuri.org/" />');
  const escaped = await request(t.app).get('/PushNotificationMobile.asmx/GetTokenDevice?id=dev-1004');
  expect(escaped.text).toContain('>tok&lt;&amp;&gt;"quoted"</string>');
});

test('lists are indented with CRLF; an empty list is an empty root; an empty field is an empty element', async () => {
  const none = await request(t.app).get(`${NOTES}?school_base_url=nowhere&show_active=1`);
  expect(none.text).toBe(
    '<?xml version="1.0" encoding="utf-8"?>\r\n<ArrayOfStudentInfo xmlns:xsd="http://www.w3.org/2001/XMLSchema" ' +
      'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns="http://tempuri.org/" />',
  );
  const one = await request(t.app).get(`${NOTES}?school_base_url=http%3A%2F%2Frafidain.school.example&show_active=1`);
  expect(one.text).toContain('\r\n  <StudentInfo>\r\n    <id_student>2001</id_student>\r\n');
  expect(one.text).toContain('    <id_device />\r\n');
});

test('a void answer is an empty 200 without Content-Type', async () => {
  const res = await request(t.app).get('/PushNotificationMobile.asmx/GetServerKeyAndSender');
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toBeUndefined();
  expect(res.text).toBe('');
});

test('AuthCode over HTTP is kept in the outbox', async () => {
  await form('/AuthCodeSending.asmx/AuthCode', 'code=9911&phone=%2B9647700000000');
  expect(await queued(t.store)).toContainEqual({ code: '9911', phone: '+9647700000000' });
});

test('a failure inside an operation reveals nothing', async () => {
  const broken = jest.spyOn(t.store, 'studentsOf').mockRejectedValueOnce(new Error('no such table: students (/srv/db.sqlite)'));
  const res = await request(t.app).get(`${NOTES}?${alnoor}&show_active=1`);
  broken.mockRestore();
  expect(res.status).toBe(500);
  expect(res.text).toMatch(/^Server was unable to process request\. ---> /);
  expect(res.text).not.toMatch(/students|sqlite|srv/);
});

test('an unknown endpoint is 404', async () => {
  expect((await request(t.app).get('/Nope.asmx/GetAboutUs')).status).toBe(404);
});

test('%uXXXX escapes, as .NET proxies send non-ASCII, are decoded', async () => {
  const res = await form(
    '/NotificationNotes.asmx/GetStudentSchool',
    'school_base_url=http%3A%2F%2F%u0645%u062F%u0631%u0633%u0629.example&show_active=1',
  );
  expect(res.text).toContain('<id_student>3001</id_student>');
  const get = await request(t.app).get('/PushNotificationMobile.asmx/GetTokenDevice?id=%u0064ev-1001');
  expect(get.text).toContain('fcm:APA91bH-token-1001');
});
