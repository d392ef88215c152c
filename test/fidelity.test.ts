import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import iconv from 'iconv-lite';
import request from 'supertest';
import { hostRules, unknownMethodAnswer } from '../src/app/iis';
import { createServer as createHostServer } from '../src/transport/server';
import { createTestApp, type TestApp } from './helpers/app';
import { envelope, opElement } from './helpers/soap';

/**
 * Request-reading rules of the .NET Framework that the legacy host (Mono, whose System.Web is its
 * own) does not follow, so the corpus cannot hold them, and the robustness of the new paths. Each
 * rule cites the reference source it comes from.
 */

/** Written, not ended: the server closes the connection once it has answered (HTTP/1.0, Connection: close). */
const rawExchange = (port: number, bytes: string) =>
  new Promise<Buffer>((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks)));
  });

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ BASE_PATH: '/StudentService' });
});
afterAll(() => t.close());

const SCHOOL = '/StudentService/NotificationNotes.asmx';
const ARABIC_SCHOOL = 'http://مدرسة.example';
const students = (res: request.Response) => (res.text.match(/<StudentInfo>/g) ?? []).length;
const escaped = (text: string, encoding: string) =>
  [...iconv.encode(text, encoding)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
const query = (url: string) => `${SCHOOL}/GetStudentSchool?school_base_url=${url}&show_active=1`;

test('the Arabic school has students, so a wrong decoding shows', async () => {
  expect(students(await request(t.app).get(query(encodeURIComponent(ARABIC_SCHOOL))))).toBeGreaterThan(0);
});

// HttpRequest.GetEncodingFromHeaders: the charset counts only for a request with a body.
test('a query string is UTF-8 when the request has no body, whatever charset its Content-Type names', async () => {
  const res = await request(t.app)
    .get(query(escaped(ARABIC_SCHOOL, 'windows-1256')))
    .set('Content-Type', 'text/plain; charset=windows-1256');
  expect(students(res)).toBe(0);
  const utf8 = await request(t.app)
    .get(query(encodeURIComponent(ARABIC_SCHOOL)))
    .set('Content-Type', 'text/plain; charset=windows-1256');
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
  const res = await request(t.app)
    .post(SCHOOL.replace('NotificationNotes', 'AboutUs'))
    .set('Content-Type', 'application/soap+xml')
    .send(body);
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

test("JSON-like types ASP.NET AJAX does not take are the HTTP binding's", async () => {
  const url = '/StudentService/PushNotificationMobile.asmx/GetTokenDevice';
  const res = await request(t.app).post(url).set('Content-Type', 'application/json-patch+json').send('{}');
  expect([res.status, res.text]).toEqual([500, 'Request format is invalid: application/json-patch+json.\r\n']);
  expect((await request(t.app).get('/StudentService/PushNotificationMobile.asmx/jsx')).text).toBe(
    'jsx Web Service method name is not valid.\r\n',
  );
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

  const http10 = async (head: string, body = '') => (await rawExchange(port, `${head}\r\n\r\n${body}`)).toString('latin1');

  // The corpus covers the bindings and pages; these are the answers that come from the app itself.
  test.each([
    ['an unknown path', 'GET /nowhere HTTP/1.0', ''],
    [
      'a refused body',
      'POST /StudentService/AboutUs.asmx HTTP/1.0\r\nContent-Type: text/xml\r\nContent-Encoding: x-unknown\r\nContent-Length: 2',
      'ab',
    ],
    ['a runtime error page', 'GET /StudentService/AboutUs.asmx/ HTTP/1.0', ''],
    ["IIS's page", 'DELETE /StudentService/AboutUs.asmx HTTP/1.0', ''],
  ])('%s is framed with a Content-Length', async (_name, head, requestBody) => {
    const answer = await http10(head, requestBody);
    const end = answer.indexOf('\r\n\r\n');
    const [headers, body] = [answer.slice(0, end), answer.slice(end + 4)];
    expect(headers).toMatch(/^HTTP\/1\.[01] [45]\d\d /);
    expect(headers).not.toMatch(/transfer-encoding/i);
    expect(Number(/\r\ncontent-length: (\d+)/i.exec(headers)?.[1])).toBe(Buffer.byteLength(body, 'latin1'));
  });
});

// Request validation (System.Web/HttpRequest.cs ValidateString, ValidateHttpValueCollection;
// CrossSiteScriptingValidation.IsDangerousString) where Mono's System.Web has rules of its own.
describe('request validation', () => {
  const TOKEN = '/StudentService/PushNotificationMobile.asmx/GetTokenDevice';
  const FORM = 'application/x-www-form-urlencoded';
  const both = (query: string) => [
    request(t.app).get(`${TOKEN}?${query}`),
    request(t.app).post(TOKEN).set('Content-Type', FORM).send(query),
  ];
  const refusal = (collection: string, quoted: string) =>
    `A potentially dangerous Request.${collection} value was detected from the client (${quoted}).\r\n`;
  const letters = (n: number) => 'cdefghijklmnopqrstuvwxyz'.repeat(3).slice(0, n);

  // Mono quotes a value over 18 characters as its first 15 and `...`; .NET quotes from 10 UTF-16
  // units before the dangerous place to 20 after, `...` where it cut. The cut is made before the
  // message is HTML-encoded, so it never splits a reference; it can split a surrogate pair (U+FFFD).
  const whole = (n: number): [string, string] => [`<b${letters(n - 2)}`, `id=&quot;&lt;b${letters(n - 2)}&quot;`];
  test.each<[string, Array<[string, string]>]>([
    [
      '20 units after it, then ...',
      [
        ...[14, 15, 16, 17, 20].map(whole),
        [`<b${letters(19)}`, `id=&quot;&lt;b${letters(18)}...&quot;`],
        [`<b${'x'.repeat(98)}`, `id=&quot;&lt;b${'x'.repeat(18)}...&quot;`],
      ],
    ],
    [
      '10 units before it, after ...',
      [
        [`${'a'.repeat(10)}&#65;`, `id=&quot;${'a'.repeat(10)}&amp;#65;&quot;`],
        [`${'a'.repeat(11)}&#65;`, `id=&quot;...${'a'.repeat(10)}&amp;#65;&quot;`],
        [`${'a'.repeat(30)}<b${'z'.repeat(30)}`, `id=&quot;...${'a'.repeat(10)}&lt;b${'z'.repeat(18)}...&quot;`],
      ],
    ],
    [
      'units before HTML-encoding',
      [
        [`<b${letters(17)}&yy`, `id=&quot;&lt;b${letters(17)}&amp;...&quot;`],
        [`éé<bعربي${letters(16)}`, `id=&quot;&#233;&#233;&lt;bعربي${letters(14)}...&quot;`],
      ],
    ],
    [
      'UTF-16 units, a surrogate pair two',
      [
        [`<b${letters(16)}😀`, `id=&quot;&lt;b${letters(16)}😀&quot;`],
        [`<b${letters(17)}😀`, `id=&quot;&lt;b${letters(17)}\ufffd...&quot;`],
        [`x😀${letters(9)}<b`, `id=&quot;...\ufffd${letters(9)}&lt;b&quot;`],
      ],
    ],
  ])('a dangerous value is quoted as .NET cuts it: %s', async (_rule, cases) => {
    for (const [value, quoted] of cases) {
      const [get, post] = await Promise.all(both(`id=${encodeURIComponent(value)}`));
      expect([get.status, get.text]).toEqual([500, refusal('QueryString', quoted)]);
      expect([post.status, post.text]).toEqual([500, refusal('Form', quoted)]);
    }
  });

  test('a 60 KB form value is quoted in 20 characters, not repeated', async () => {
    const value = `<img src=x onerror=alert(1)>${'A'.repeat(60_000)}`;
    const res = await request(t.app)
      .post(TOKEN)
      .set('Content-Type', FORM)
      .send(`id=${encodeURIComponent(value)}`);
    expect(res.text).toBe(refusal('Form', 'id=&quot;&lt;img src=x onerror=a...&quot;'));
  });

  // Mono finds the markup without the NULs but quotes the value with them.
  test('NULs are removed before the value is checked and quoted', async () => {
    for (const res of await Promise.all(both('id=%00x%3C%00b'))) expect(res.text).toContain('(id=&quot;x&lt;b&quot;)');
  });

  // HttpValueCollection.KeyIsCandidateForValidation skips ASP.NET's own fields, which Mono
  // validates. IsDangerousString since .NET 4 refuses `</` and `<?`, which Mono's rule lets through,
  // and lets through `<` before a control character and the fullwidth `＜`, which Mono refuses.
  test("every name but those starting with __ (ASP.NET's own fields) is validated, by .NET's rule", async () => {
    for (const query of ['id=dev-1001&__x=%3Cb&__VIEWSTATE=%26%23', `id=dev-1001&x=${encodeURIComponent('＜b <\tx')}`]) {
      for (const res of await Promise.all(both(query)))
        expect([res.status, res.text]).toEqual([200, expect.stringContaining('fcm:APA91bH-token-1001')]);
    }
    for (const value of ['</b>', '<?x']) {
      for (const res of await Promise.all(both(`id=dev-1001&x=${encodeURIComponent(value)}`))) expect(res.status).toBe(500);
    }
  });

  // HttpValueCollection.FillFromEncodedBytes: a form segment without `=` is a value without a name (Mono: a name).
  test('a form value without a name is validated, and quoted with no name', async () => {
    const res = await request(t.app).post(TOKEN).set('Content-Type', FORM).send('id=dev-1001&x&%3Cb&');
    expect(res.text).toBe(refusal('Form', '=&quot;x,&lt;b,&quot;'));
  });

  // ThrowIfMaxHttpCollectionKeysExceeded runs before each segment, a repeated name's too.
  test('once the collection holds 1,000 names, even a repeated one is refused', async () => {
    const names = Array.from({ length: 999 }, (_, i) => `f${i}=1`).join('&');
    const post = (form: string) => request(t.app).post(TOKEN).set('Content-Type', FORM).send(form);
    expect((await post(`${names}&id=dev-1001&`)).status).toBe(200);
    const refused = await post(`${names}&id=dev-1001&id=dev-1001`);
    expect([refused.status, refused.text]).toEqual([
      500,
      'The URL-encoded form data is not valid. ---> Operation is not valid due to the current state of the object.\r\n',
    ]);
  });
});

// HttpServerProtocol.WriteException: ServerProtocol.GenerateFaultString(e, htmlEscapeMessage: true)
// HTML-encodes every message (Mono leaves these messages' {0} unfilled, so the corpus cannot say).
test.each([
  [
    'a char that does not convert',
    `${SCHOOL}/GetStudentSchool?school_base_url=x&show_active=a%26%C3%A9`,
    'Cannot convert a&amp;&#233; to System.Char.\r\nParameter name: type ---> String must be exactly one character long.\r\n',
  ],
  ['an unknown method', "/StudentService/AboutUs.asmx/Get%C3%A9'", 'Get&#233;&#39; Web Service method name is not valid.\r\n'],
])('HTTP GET errors HTML-encode what the client sent: %s', async (_name, url, text) => {
  expect((await request(t.app).get(url)).text).toBe(text);
});

test('HTTP POST errors HTML-encode the Content-Type they quote', async () => {
  const res = await request(t.app).post(`${SCHOOL}/GetStudentSchool`).set('Content-Type', 'text/plain; a="<b>"').send('x');
  expect(res.text).toBe('Request format is invalid: text/plain; a=&quot;&lt;b&gt;&quot;.\r\n');
});
/**
 * What IIS 10 with ASP.NET 4 answers before ASMX is reached (src/app/iis.ts, contract/url.ts), where
 * the legacy host (Mono behind an HttpListener) answers otherwise; asked over a socket, as the
 * request line is sent, through the service's own listener (an unknown method is its parser's).
 */
describe('IIS in front', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createHostServer(t.config.limits, t.app, unknownMethodAnswer(hostRules(t.config.basePath, t.config.limits))).listen(
      0,
      '127.0.0.1',
    );
    await new Promise((r) => server.once('listening', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  const ask = async (line: string, extra = '') => {
    const text = (await rawExchange(port, `${line} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${extra}\r\n`)).toString('utf8');
    const end = text.indexOf('\r\n\r\n');
    return { status: Number(text.slice(9, 12)), head: text.slice(0, end), body: text.slice(end + 4) };
  };
  const S = '/StudentService';
  const TOKEN = 'fcm:APA91bH-token-1001';
  const IIS_404 = '<h2>404 - File or directory not found.</h2>';

  // http.sys decodes, turns `\` to `/` and resolves dot segments (KB 896287); ASP.NET's
  // VirtualPath.Create collapses `//` and trims the end (UrlPath.FixVirtualPathSlashes); Mono reads
  // `/X.asmx//Op` as the operation `/Op`.
  test.each([
    `//StudentService/PushNotificationMobile.asmx/GetTokenDevice?id=dev-1001`,
    `${S}//PushNotificationMobile.asmx/GetTokenDevice?id=dev-1001`,
    `${S}/PushNotificationMobile.asmx//GetTokenDevice?id=dev-1001`,
    `${S}/./x/../PushNotificationMobile.asmx/GetTokenDevice?id=dev-1001`,
    `/x/..${S}/PushNotificationMobile.asmx/GetTokenDevice?id=dev-1001`,
    `${S}\\PushNotificationMobile.asmx\\GetTokenDevice?id=dev-1001`,
    `/Student%53ervice%2FPushNotificationMobile.asmx%5cGetTokenDevice?id=dev-1001`,
    `${S}/PushNotificationMobile.asmx/GetTokenDevice%20%C2%A0?id=dev-1001`,
    `${S}/PushNotificationMobile.asmx/GetTokenDevice?id=dev-1001#id=other`,
  ])('a path is read as http.sys and ASP.NET make it canonical: GET %s', async (target) => {
    const r = await ask(`GET ${target}`);
    expect([r.status, r.body.includes(TOKEN)]).toEqual([200, true]);
  });

  // ServerProtocol.cs: the WSDL's address is Request.Url's, which HttpRequest builds on Path (canonical); Mono keeps `//`.
  test("the WSDL's addresses name the canonical path", async () => {
    expect((await ask('GET //StudentService/x/../About%55s.asmx?wsdl')).body).toContain(
      '<soap:address location="http://x/StudentService/AboutUs.asmx" />',
    );
  });

  // KB 820129: AllowRestrictedChars off, UrlSegmentMaxLength 260; a `..` above the root.
  test.each([
    '/GetAboutUs%00',
    '/GetAboutUs%09',
    '%7F',
    '/Get%C2%85',
    '/Get%u0001',
    '/../../..',
    '/%2e%2e/%2E%2E/..',
    `/${'a'.repeat(261)}`,
  ])("http.sys's 400 Invalid URL, the connection closed: GET /StudentService/AboutUs.asmx%s", async (rest) => {
    const r = await ask(`GET ${S}/AboutUs.asmx${rest}`);
    expect([r.status, r.body.includes('HTTP Error 400. The request URL is invalid.'), /\r\nconnection: close/i.test(r.head)]).toEqual([
      400,
      true,
      true,
    ]);
  });

  test('escapes that are not UTF-8 are read in the ANSI code page (EnableNonUTF8, FavorUTF8)', async () => {
    const r = await ask(`GET ${S}/PushNotificationMobile.asmx/GetTokenDevice%C0%AF`);
    expect([r.status, r.body]).toEqual([500, 'GetTokenDevice&#192;&#175; Web Service method name is not valid.\r\n']);
  });

  // requestFiltering: allowDoubleEscaping false (404.11); ASP.NET: maxUrlLength, requestPathInvalidCharacters,
  // its 404 for a script it cannot find or a path Windows would read otherwise; IIS's 404, and 403.14 for the directory.
  const [RUNTIME, ASPNET_404] = ['<title>Runtime Error</title>', '<title>The resource cannot be found.</title>'];
  test.each([
    ['/AboutUs.asmx/Get+AboutUs', 404, IIS_404],
    ['/AboutUs.asmx/Get%2BAboutUs', 404, IIS_404],
    ['/AboutUs.asmx/Get%2541boutUs', 404, IIS_404],
    ['/AboutUs.asmx/Get:AboutUs', 400, RUNTIME],
    ['/AboutUs.asmx/Get%2A', 400, RUNTIME],
    ['/AboutUs.asmx/Get%3C', 400, RUNTIME],
    ['/AboutUs.asmx/Get%25', 400, RUNTIME],
    [`/AboutUs.asmx/${'ab/'.repeat(90)}x`, 400, RUNTIME],
    ['/AboutUs/GetAboutUs', 404, IIS_404],
    ['/../elsewhere', 404, IIS_404],
    ['/AboutUs.asmx%20', 404, IIS_404],
    ['/Nothing.asmx', 404, `<b> Requested URL: </b>${S}/Nothing.asmx<br><br>`],
    ['/x/AboutUs.asmx/GetAboutUs', 404, ASPNET_404],
    ['/default.aspx', 404, ASPNET_404],
    ['/%20AboutUs.asmx', 404, ASPNET_404],
    ['/AboutUs.asmx.', 404, ASPNET_404],
    ['/AboutUs.asmx%20/GetAboutUs', 404, ASPNET_404],
    ['/', 403, '<h2>403 - Forbidden: Access is denied.</h2>'],
  ])(
    'http.sys, request filtering, then ASP.NET check every path, and IIS answers what names no service: GET /StudentService%s',
    async (path, status, page) => {
      const r = await ask(`GET ${S}${path}`);
      expect([r.status, r.body.includes(page)]).toEqual([status, true]);
      // ASP.NET's pages say Cache-Control: private; IIS's say nothing.
      expect(/\r\ncache-control: private\r\n/i.test(r.head)).toBe(
        page === RUNTIME || page === ASPNET_404 || page.includes('Requested URL'),
      );
    },
  );

  test.each([
    ['FOO', '/AboutUs.asmx', 405],
    ['PUT', '/AboutUs.asmx', 405],
    ['DELETE', '/', 405],
    ['PATCH', '/AboutUs.asmx/GetAboutUs', 404],
    ['FOO', '/AboutUs.asmx/GetAboutUs', 404],
    ['PROPFIND', '/nothing', 404],
    ['DEBUG', '/AboutUs.asmx', 403],
  ])("IIS's static file handler takes the methods ASP.NET is not mapped for: %s %s", async (method, path, status) => {
    const r = await ask(`${method} ${S}${path}`, 'Content-Length: 0\r\n');
    expect([r.status, /^<!DOCTYPE html PUBLIC "-\/\/W3C\/\/DTD XHTML 1\.0 Strict/.test(r.body)]).toEqual([status, true]);
    expect(/\r\nallow: GET, HEAD, OPTIONS, TRACE\r\n/i.test(r.head)).toBe(status === 405);
    expect((await ask(`F(O ${S}/AboutUs.asmx`)).body).toContain('HTTP Error 400. The request is badly formed.');
  });

  test("OPTIONS and TRACE are IIS's on any path", async () => {
    for (const path of [`${S}/AboutUs.asmx`, `${S}/AboutUs.asmx/GetAboutUs`, '/nothing', '*']) {
      const options = await ask(`OPTIONS ${path}`);
      expect([options.status, options.body]).toEqual([200, '']);
      expect(options.head).toMatch(/\r\nAllow: OPTIONS, TRACE, GET, HEAD, POST\r\nPublic: OPTIONS, TRACE, GET, HEAD, POST\r\n/);
      if (path === '*') continue;
      const trace = await ask(`TRACE ${path}`);
      expect([trace.status, trace.body.includes('<h2>501 - Header values specify a method that is not implemented.</h2>')]).toEqual([
        501,
        true,
      ]);
    }
  });

  // Decided: .NET answers these as the service does; the legacy host does not (docs/fidelity.md).
  test("a query of 2,048 bytes is served, one of 2,049 is request filtering's 404.15; a fragment is not counted", async () => {
    const query = (n: number) => `${S}/AboutUs.asmx/GetAboutUs?x=${'q'.repeat(n - 2)}`;
    expect((await ask(`GET ${query(2048)}`)).status).toBe(200);
    expect((await ask(`GET ${query(2048)}#${'f'.repeat(100)}`)).status).toBe(200);
    expect((await ask(`GET ${query(2049)}`)).status).toBe(404);
  });

  test('direction marks, non-ASCII and white space before an operation name are read as written', async () => {
    const marked = await ask(`GET ${S}/PushNotificationMobile.asmx/GetTokenDevice?id=%E2%80%8Edev-1001%E2%80%AC`);
    expect([marked.status, marked.body.includes('xsi:nil="true"')]).toEqual([200, true]);
    expect((await ask(`GET ${S}/AboutUs.asmx/%D8%B9%C3%A9`)).body).toBe('\u0639&#233; Web Service method name is not valid.\r\n');
    expect((await ask(`GET ${S}/AboutUs.asmx/%20GetAboutUs`)).body).toBe(' GetAboutUs Web Service method name is not valid.\r\n');
  });
});
