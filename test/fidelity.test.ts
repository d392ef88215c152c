import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import iconv from 'iconv-lite';
import request from 'supertest';
import { createTestApp, type TestApp } from './helpers/app';
import { envelope, opElement } from './helpers/soap';

/**
 * Request-reading rules of the .NET Framework that the legacy host (Mono, whose System.Web is its
 * own) does not follow, so the corpus cannot hold them, and the robustness of the new paths. Each
 * rule cites the reference source it comes from.
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ BASE_PATH: '/StudentService' });
});
afterAll(() => t.close());

const SCHOOL = '/StudentService/NotificationNotes.asmx';
const ARABIC_SCHOOL = 'http://مدرسة.example';
const students = (res: request.Response) => (res.text.match(/<StudentInfo>/g) ?? []).length;
const escaped = (text: string, encoding: string) => [...iconv.encode(text, encoding)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
const query = (url: string) => `${SCHOOL}/GetStudentSchool?school_base_url=${url}&show_active=1`;

test('the Arabic school has students, so a wrong decoding shows', async () => {
  expect(students(await request(t.app).get(query(encodeURIComponent(ARABIC_SCHOOL))))).toBeGreaterThan(0);
});

// HttpRequest.GetEncodingFromHeaders: the charset counts only for a request with a body.
test('a query string is UTF-8 when the request has no body, whatever charset its Content-Type names', async () => {
  const res = await request(t.app).get(query(escaped(ARABIC_SCHOOL, 'windows-1256'))).set('Content-Type', 'text/plain; charset=windows-1256');
  expect(students(res)).toBe(0);
  const utf8 = await request(t.app).get(query(encodeURIComponent(ARABIC_SCHOOL))).set('Content-Type', 'text/plain; charset=windows-1256');
  expect(students(utf8)).toBeGreaterThan(0);
});

// HttpRequest.QueryStringEncoding: never UTF-16.
test('a query string is read as UTF-8 when the body is declared UTF-16', async () => {
  const res = await request(t.app)
    .get(query(encodeURIComponent(ARABIC_SCHOOL)))
    .set('Content-Type', 'text/plain; charset=utf-16')
    .send('xx');
  expect(students(res)).toBeGreaterThan(0);
});

// HttpRequest.ContentEncoding: UTF-7 is refused (AllowUtf7RequestContentEncoding is off by default).
test('a form declared UTF-7 is read as UTF-8', async () => {
  const res = await request(t.app)
    .post(`${SCHOOL}/GetStudentSchool`)
    .set('Content-Type', 'application/x-www-form-urlencoded; charset=utf-7')
    .send(`school_base_url=${encodeURIComponent(ARABIC_SCHOOL)}&show_active=1`);
  expect(students(res)).toBeGreaterThan(0);
});

// HttpRequest.GetEncodingFromHeaders: a WAP browser names its form's charset in its own header.
test("an Openwave browser's x-up-devcap-post-charset decides a form's encoding", async () => {
  const send = (userAgent: string) =>
    request(t.app)
      .post(`${SCHOOL}/GetStudentSchool`)
      .set('Content-Type', 'application/x-www-form-urlencoded')
      .set('User-Agent', userAgent)
      .set('x-up-devcap-post-charset', 'windows-1256')
      .send(`school_base_url=${escaped(ARABIC_SCHOOL, 'windows-1256')}&show_active=1`);
  expect(students(await send('UP.Browser/6.2'))).toBeGreaterThan(0);
  expect(students(await send('Mozilla/5.0'))).toBe(0);
});

test.each([
  ['base64', 'base64'],
  ['hex', 'hex'],
  ['binary', 'binary'],
  ['empty', ''],
  ['a quote', '"'],
  ['a known name spelled loosely', 'UTF 16'],
  ['5000 letters', 'x'.repeat(5000)],
  ['EBCDIC, which iconv-lite lacks', 'ibm037'],
  ['non-ASCII', '\u00e9'],
])('charset %s is unknown, read as .NET reads an unknown charset', async (_label, charset) => {
  const body = envelope('1.2', opElement('GetStudentSchool', { school_base_url: 'http://alnoor.school.example', show_active: '49' }));
  const soap = await request(t.app).post(SCHOOL).set('Content-Type', `application/soap+xml; charset=${charset}`).send(body);
  expect(soap.status).toBe(200);
  const soap11 = await request(t.app)
    .post(SCHOOL)
    .set('Content-Type', `text/xml; charset=${charset}`)
    .set('SOAPAction', '"http://tempuri.org/GetStudentSchool"')
    .send(envelope('1.1', opElement('GetStudentSchool', { school_base_url: 'http://alnoor.school.example', show_active: '49' })));
  expect(soap11.status).toBe(200);
  const form = await request(t.app)
    .post(`${SCHOOL}/GetStudentSchool`)
    .set('Content-Type', `application/x-www-form-urlencoded; charset=${charset}`)
    .send('school_base_url=http%3A%2F%2Falnoor.school.example&show_active=1');
  expect(students(form)).toBe(3);
});

// Scalars.cs, ContentType.GetParameter: a SOAP request's charset loses spaces, tabs and quotes of
// either kind from both ends, so `'utf-16'` is UTF-16 (a text/xml body in an unknown charset would
// be ASCII); HttpRequest reads a form's charset otherwise.
test('a charset of a known name and quotes: UTF-16 for SOAP, unknown for a form', async () => {
  const body = envelope('1.1', opElement('GetStudentSchool', { school_base_url: 'http://alnoor.school.example', show_active: '49' }));
  for (const charset of ['utf-16"', "'utf-16'", '"utf-16\'', ' \tutf-16 ']) {
    const soap = await request(t.app)
      .post(SCHOOL)
      .set('Content-Type', `text/xml; charset=${charset}`)
      .set('SOAPAction', '"http://tempuri.org/GetStudentSchool"')
      .send(iconv.encode(body, 'utf-16le'));
    expect(students(soap)).toBe(3);
  }
  const form = await request(t.app)
    .post(`${SCHOOL}/GetStudentSchool`)
    .set('Content-Type', 'application/x-www-form-urlencoded; charset=utf-16"')
    .send('school_base_url=http%3A%2F%2Falnoor.school.example&show_active=1');
  expect(students(form)).toBe(3);
});

test("a declared encoding Node's own names would accept is still unknown to .NET", async () => {
  const body = envelope('1.2', opElement('GetAboutUs')).replace('encoding="utf-8"', 'encoding="base64"');
  const res = await request(t.app).post(SCHOOL.replace('NotificationNotes', 'AboutUs')).set('Content-Type', 'application/soap+xml').send(body);
  expect(res.status).toBe(500);
  expect(res.text).toContain("System does not support 'base64' encoding. Line 1, position 31.");
});

test("the runtime error page names the application's virtual directory and nothing of the error", async () => {
  const res = await request(t.app).get('/StudentService/AboutUs.asmx/');
  expect(res.status).toBe(500);
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(res.headers['cache-control']).toBe('private');
  expect(res.text).toContain("<H1>Server Error in '/StudentService' Application.");
  expect(res.text).toContain('<title>Runtime Error</title>');
  expect(res.text).not.toMatch(/unrecognized|Exception|\bat \w+ \(/);
  expect(res.text).toContain('&lt;customErrors mode=&quot;Off&quot;/&gt;');
});

// ScriptHandlerFactory (System.Web.Extensions/Script/Services/RestHandlerFactory.cs, WebServiceData.cs)
// takes these before ASMX, and fails for a class without [ScriptService]; Mono answers JSON instead.
test.each([
  ['POST', '/GetTokenDevice', 'application/json'],
  ['POST', '/GetTokenDevice', 'Application/JSON; charset=utf-8'],
  ['GET', '/GetTokenDevice?id=dev-1001', 'application/json'],
  ['POST', '/', 'application/json'],
  ['GET', '/js', undefined],
  ['GET', '/JSDEBUG', undefined],
])('ASP.NET AJAX: %s %s (%s) gets the runtime error page', async (method, path, type) => {
  const url = `/StudentService/PushNotificationMobile.asmx${path}`;
  const req = method === 'GET' ? request(t.app).get(url) : request(t.app).post(url).send('{"id":"dev-1001"}');
  const res = await (type === undefined ? req : req.set('Content-Type', type));
  expect([res.status, res.headers['content-type']]).toEqual([500, 'text/html; charset=utf-8']);
  expect(res.text).toContain('<title>Runtime Error</title>');
});

test('JSON-like types ASP.NET AJAX does not take are the HTTP binding\'s', async () => {
  const url = '/StudentService/PushNotificationMobile.asmx/GetTokenDevice';
  const res = await request(t.app).post(url).set('Content-Type', 'application/json-patch+json').send('{}');
  expect([res.status, res.text]).toEqual([500, 'Request format is invalid: application/json-patch+json.\r\n']);
  expect((await request(t.app).get('/StudentService/PushNotificationMobile.asmx/jsx')).text).toBe('jsx Web Service method name is not valid.\r\n');
});

test('HEAD gets the headers of the page it refuses, and no body', async () => {
  const res = await request(t.app).head('/StudentService/AboutUs.asmx');
  expect(res.status).toBe(405);
  expect(Number(res.headers['content-length'])).toBeGreaterThan(1000);
  expect(res.text ?? '').toBe('');
});

describe('HTTP/1.0', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer(t.app).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  function http10(head: string, body = ''): Promise<string> {
    return new Promise((resolve, reject) => {
      // Written, not ended: the server closes an HTTP/1.0 connection once it has answered.
      const socket = net.connect(port, '127.0.0.1', () => socket.write(`${head}\r\n\r\n${body}`));
      const chunks: Buffer[] = [];
      socket.on('data', (d: Buffer) => chunks.push(d));
      socket.on('error', reject);
      socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    });
  }

  // The corpus covers the bindings and pages; these are the answers that come from the app itself.
  test.each([
    ['an unknown path', 'GET /nowhere HTTP/1.0', ''],
    ['a refused body', 'POST /StudentService/AboutUs.asmx HTTP/1.0\r\nContent-Type: text/xml\r\nContent-Encoding: x-unknown\r\nContent-Length: 2', 'ab'],
    ['a runtime error page', 'OPTIONS /StudentService/AboutUs.asmx HTTP/1.0', ''],
  ])('%s is framed with a Content-Length', async (_name, head, requestBody) => {
    const answer = await http10(head, requestBody);
    const end = answer.indexOf('\r\n\r\n');
    const [headers, body] = [answer.slice(0, end), answer.slice(end + 4)];
    expect(headers).toMatch(/^HTTP\/1\.[01] [45]\d\d /);
    expect(headers).not.toMatch(/transfer-encoding/i);
    expect(Number(/\r\ncontent-length: (\d+)/i.exec(headers)?.[1])).toBe(Buffer.byteLength(body, 'latin1'));
  });
});
