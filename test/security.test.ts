import v8 from 'node:v8';
import vm from 'node:vm';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { exchange, problems, type RawResponse } from '../scripts/fuzz/wire';
import { createServer } from '../src/transport/server';
import { createTestApp, type TestApp } from './helpers/app';
import { faultOf } from './helpers/soap';

/**
 * The classic attacks on an XML web service, each sent as raw bytes to the real listener: every one
 * gets the legacy answer (or the documented refusal) quickly, nothing is read from disk or fetched,
 * and memory stays bounded across the whole set.
 */

let t: TestApp;
let server: http.Server;
let port: number;
/** A server standing for an attacker's URL: any request to it is an external entity fetched. */
let bait: http.Server;
let baitHits = 0;
let baitUrl: string;
let retainedBefore: number;

/**
 * Memory the process still holds after a full garbage collection: the JS heap and the buffers outside
 * it. What an attack leaves behind shows here; RSS would also count what the allocator keeps from the
 * attack's own peaks (large bodies read and dropped), which it gives back to the system when it will.
 */
function retained(): number {
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as () => void)();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

const ENV11 = 'http://schemas.xmlsoap.org/soap/envelope/';
const ACTION = '"http://tempuri.org/GetTokenDevice"';

beforeAll(async () => {
  t = await createTestApp({ REQUEST_TIMEOUT_MS: '2000' });
  server = createServer(t.config.limits, t.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  bait = http.createServer((_req, res) => {
    baitHits++;
    res.end('<!ENTITY leaked "fetched">');
  });
  await new Promise<void>((resolve) => bait.listen(0, '127.0.0.1', resolve));
  baitUrl = `http://127.0.0.1:${(bait.address() as AddressInfo).port}/evil.dtd`;
  retainedBefore = retained();
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await new Promise((resolve) => bait.close(resolve));
  await t.close();
});

function request(method: string, target: string, headers: Record<string, string>, body: Buffer | string = ''): Buffer {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  let head = `${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n`;
  for (const [k, v] of Object.entries(headers)) head += `${k}: ${v}\r\n`;
  if (bytes.length > 0 || method === 'POST') head += `Content-Length: ${bytes.length}\r\n`;
  return Buffer.concat([Buffer.from(`${head}\r\n`, 'latin1'), bytes]);
}

/**
 * Sends raw bytes; the answer must be complete and free of internals. `withinMs` only tells a held
 * connection from a loaded machine: it is no speed goal.
 */
async function attack(bytes: Buffer, method = 'POST', withinMs = 10_000): Promise<RawResponse> {
  const outcome = await exchange('127.0.0.1', port, bytes, method, withinMs);
  expect(problems(outcome, bytes)).toEqual([]);
  if (outcome.kind !== 'response') throw new Error(`no answer: ${outcome.kind}`);
  return outcome.response;
}

const soap11 = (xml: string | Buffer, headers: Record<string, string> = {}) =>
  attack(
    request('POST', '/PushNotificationMobile.asmx', { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: ACTION, ...headers }, xml),
  );
const soap12 = (xml: string | Buffer) =>
  attack(request('POST', '/PushNotificationMobile.asmx', { 'Content-Type': 'application/soap+xml; charset=utf-8' }, xml));

function withDoctype(doctype: string, id: string): string {
  return `<?xml version="1.0"?>${doctype}<soap:Envelope xmlns:soap="${ENV11}"><soap:Body><GetTokenDevice xmlns="http://tempuri.org/"><id>${id}</id></GetTokenDevice></soap:Body></soap:Envelope>`;
}

const tokenRequest = (id: string) => withDoctype('', id);

describe('entity attacks: no DTD is ever processed', () => {
  const laughs =
    '<!DOCTYPE lolz [<!ENTITY lol "lol">' +
    Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i === 0 ? '' : i};`.repeat(10)}">`).join('') +
    ']>';
  const cases: [string, string, string][] = [
    ['billion laughs', laughs, '&lol9;'],
    ['quadratic blow-up', `<!DOCTYPE q [<!ENTITY a "${'a'.repeat(50_000)}">]>`, '&a;'.repeat(20_000)],
    ['external entity to a local file', '<!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>', '&xxe;'],
    ['external entity to a URL', '<!DOCTYPE x [<!ENTITY xxe SYSTEM "BAIT">]>', '&xxe;'],
    ['external parameter entity', '<!DOCTYPE x [<!ENTITY % remote SYSTEM "BAIT"> %remote;]>', '&leaked;'],
    ['external DTD', '<!DOCTYPE x SYSTEM "BAIT">', '&leaked;'],
  ];

  test.each(cases)('%s: SOAP 1.1 with SOAPAction is a 400 with an empty body', async (_name, doctype, id) => {
    const r = await soap11(withDoctype(doctype.replace('BAIT', baitUrl), id));
    expect(r.status).toBe(400);
    expect(r.body.length).toBe(0);
  });

  test.each(cases)('%s: SOAP 1.2 is the server fault "DTD is prohibited"', async (_name, doctype, id) => {
    const r = await soap12(withDoctype(doctype.replace('BAIT', baitUrl), id).replace(ENV11, 'http://www.w3.org/2003/05/soap-envelope'));
    expect(r.status).toBe(500);
    expect(faultOf(r.body.toString()).text).toBe('Server was unable to process request. ---> DTD is prohibited in this XML document.');
    expect(r.body.toString()).not.toMatch(/root:|fetched|lollol/);
  });

  test('nothing was fetched from the attacker URL', () => {
    expect(baitHits).toBe(0);
  });
});

describe('size and shape', () => {
  test('a 100 MB body is answered at once, unread, and the connection closes cleanly', async () => {
    const answer = await new Promise<{ head: string; sent: number }>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      const total = 100 * 1024 * 1024;
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      let sent = 0;
      let received = '';
      socket.on('connect', () => {
        socket.write(
          `POST /PushNotificationMobile.asmx HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml; charset=utf-8\r\nSOAPAction: ${ACTION}\r\nContent-Length: ${total}\r\n\r\n`,
        );
        const pump = () => {
          while (sent < total && received === '' && socket.write(chunk)) sent += chunk.length;
        };
        socket.on('drain', pump);
        pump();
      });
      socket.on('data', (d: Buffer) => (received += d.toString('latin1')));
      // The server ends the connection (a FIN, not a reset) once it has given up on the body.
      socket.on('end', () => resolve({ head: received, sent }));
      socket.on('error', reject);
      setTimeout(() => reject(new Error('no answer within 5 s')), 5000).unref();
    });
    // Answered before the client could send it all: refused on its declared length, never read.
    expect(answer.sent).toBeLessThan(100 * 1024 * 1024);
    expect(answer.head).toMatch(/^HTTP\/1\.1 500 /);
    expect(answer.head).toMatch(/\r\nConnection: close\r\n/i);
    expect(answer.head).toContain('Maximum request length exceeded.');
  });

  test('a gzip bomb is refused once it inflates past the limit', async () => {
    // 64 MB of spaces, compressed a megabyte at a time so the test itself never holds them.
    const gzip = zlib.createGzip({ level: 9 });
    const parts: Buffer[] = [];
    gzip.on('data', (d: Buffer) => parts.push(d));
    const done = new Promise((resolve) => gzip.on('end', resolve));
    const megabyte = Buffer.alloc(1024 * 1024, 0x20);
    for (let i = 0; i < 64; i++) gzip.write(megabyte);
    gzip.end();
    await done;
    const bomb = Buffer.concat(parts);
    const r = await soap11(bomb, { 'Content-Encoding': 'gzip' });
    expect(r.status).toBe(500);
    expect(faultOf(r.body.toString()).text).toContain('Maximum request length exceeded.');
  });

  test('deep nesting is refused after 64 levels, without reading the rest', async () => {
    const deep = tokenRequest('<a>'.repeat(200_000) + '</a>'.repeat(200_000));
    const r = await soap12(deep.replace(ENV11, 'http://www.w3.org/2003/05/soap-envelope'));
    expect(r.status).toBe(400);
    // Too deep before the Body (in a header): the document is refused as unreadable, with the place.
    const inHeader = tokenRequest('dev-1001')
      .replace(ENV11, 'http://www.w3.org/2003/05/soap-envelope')
      .replace('<soap:Body>', `<soap:Header>${'<h>'.repeat(70)}</soap:Header><soap:Body>`);
    const shallow = await soap12(inHeader);
    expect(faultOf(shallow.body.toString()).text).toMatch(
      /^Server was unable to process request\. ---> The XML document is nested more than 64 elements deep\. Line 1, position \d+\.$/,
    );
  });

  test('10,000 repeated elements are the limit', async () => {
    const r = await soap11(tokenRequest(`dev-1001</id>${'<x/>'.repeat(20_000)}<id>`));
    expect(r.status).toBe(400);
    const within = await soap11(tokenRequest(`dev-1001</id>${'<x/>'.repeat(9_000)}<id>`));
    expect(within.status).toBe(200);
    expect(within.body.toString()).toContain('fcm:APA91bH-token-1001');
  });

  test('a form with more than 1,000 names is refused as ASP.NET refuses it', async () => {
    const form = `${Array.from({ length: 1500 }, (_, i) => `f${i}=1`).join('&')}&id=dev-1001`;
    const r = await attack(
      request('POST', '/PushNotificationMobile.asmx/GetTokenDevice', { 'Content-Type': 'application/x-www-form-urlencoded' }, form),
    );
    expect(r.status).toBe(500);
    expect(r.body.toString()).toBe(
      'The URL-encoded form data is not valid. ---> Operation is not valid due to the current state of the object.\r\n',
    );
  });

  test('a 200 KB query string is answered (414), not reset', async () => {
    const r = await attack(request('GET', `/PushNotificationMobile.asmx/GetTokenDevice?id=${'x'.repeat(200_000)}`, {}), 'GET');
    expect(r.status).toBe(414);
  });

  // The head's limit is 16 KB (http.sys's MaxRequestBytes, MAX_HEADER_BYTES): whichever part passes
  // it decides the answer, wherever the slice the parser was given ends (pacing.ts feeds it 1 KiB at a time).
  test.each([16_400, 16_500, 17_000, 17_400])(
    'a request line of %i bytes is the URL too long (414), its line end in the same slice or not',
    async (length) => {
      const path = '/PushNotificationMobile.asmx/GetTokenDevice?id=';
      const r = await attack(request('GET', `${path}${'x'.repeat(length - path.length - 'GET  HTTP/1.1'.length)}`, {}), 'GET');
      expect(r.status).toBe(414);
      expect(r.body.toString()).toContain('Request URL Too Long');
    },
  );

  test('a request line just under the limit, with headers that pass it, is the headers too long (400)', async () => {
    const path = '/PushNotificationMobile.asmx/GetTokenDevice?id=';
    const r = await attack(request('GET', `${path}${'x'.repeat(16_360 - path.length)}`, { 'X-Padding': 'y'.repeat(100) }), 'GET');
    expect(r.status).toBe(400);
    expect(r.body.toString()).toContain('Bad Request - Request Too Long');
  });

  test("a query string over 2,048 bytes is request filtering's 404", async () => {
    const r = await attack(request('GET', `/PushNotificationMobile.asmx/GetTokenDevice?id=${'x'.repeat(3000)}`, {}), 'GET');
    expect(r.status).toBe(404);
    expect(r.body.toString()).toContain('404 - File or directory not found.');
  });

  test('a body shorter than its Content-Length is answered 408 when the request time-out ends', async () => {
    const bytes = Buffer.from(
      `POST /AboutUs.asmx/GetAboutUs HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nabc`,
    );
    const r = await attack(bytes, 'POST', 10_000);
    expect(r.status).toBe(408);
  });
});

describe('injection', () => {
  const sql = ["' OR '1'='1", '1; DROP TABLE students; --', '" OR ""="', "dev-1001' --", "x' UNION SELECT token FROM devices --"];

  test.each(sql)('SQL in every parameter is only data: %s', async (payload) => {
    const q = encodeURIComponent(payload);
    const token = await attack(request('GET', `/PushNotificationMobile.asmx/GetTokenDevice?id=${q}`, {}), 'GET');
    expect(token.body.toString()).toContain('xsi:nil="true"');
    for (const query of [`school_base_url=${q}&show_active=1`, `school_base_url=http%3A%2F%2Falnoor.school.example&show_active=${q}`]) {
      const students = await attack(request('GET', `/NotificationNotes.asmx/GetStudentSchool?${query}`, {}), 'GET');
      expect(students.body.toString()).not.toContain('<StudentInfo>');
    }
    for (const op of [`GetStudentsMarks?StudnetID=${q}&SubjectID=${q}`, `X?${q}`]) {
      const r = await attack(request('GET', `/GetStudnetsMarks.asmx/${op}`, {}), 'GET');
      expect([200, 500]).toContain(r.status);
    }
    const auth = await attack(
      request('POST', '/AuthCodeSending.asmx/AuthCode', { 'Content-Type': 'application/x-www-form-urlencoded' }, `code=${q}&phone=${q}`),
    );
    expect(auth.status).toBe(200);
    // The data is intact.
    const intact = await attack(request('GET', '/PushNotificationMobile.asmx/GetTokenDevice?id=dev-1001', {}), 'GET');
    expect(intact.body.toString()).toContain('fcm:APA91bH-token-1001');
  });

  test('CR LF in a parameter never becomes a header', async () => {
    const r = await attack(request('GET', '/PushNotificationMobile.asmx/GetTokenDevice?id=x%0d%0aSet-Cookie:%20a=1%0d%0a', {}), 'GET');
    expect(r.headers['set-cookie']).toBeUndefined();
    const page = await attack(request('GET', '/PushNotificationMobile.asmx?op=GetTokenDevice%0d%0aSet-Cookie:%20a=1', {}), 'GET');
    expect(page.headers['set-cookie']).toBeUndefined();
  });
});

describe('bytes that are not text', () => {
  test.each([
    ['invalid UTF-8 in a SOAP body', () => soap11(Buffer.concat([Buffer.from(tokenRequest('dev')), Buffer.from([0xc3, 0x28, 0xff])]))],
    ['NUL bytes in a SOAP body', () => soap11(tokenRequest('dev\u0000-1001'))],
    [
      'invalid UTF-8 in a form',
      () =>
        attack(
          request(
            'POST',
            '/PushNotificationMobile.asmx/GetTokenDevice',
            { 'Content-Type': 'application/x-www-form-urlencoded' },
            Buffer.from([0x69, 0x64, 0x3d, 0xff, 0xc3, 0x28]),
          ),
        ),
    ],
    [
      'NUL in a form value',
      () =>
        attack(
          request('POST', '/PushNotificationMobile.asmx/GetTokenDevice', { 'Content-Type': 'application/x-www-form-urlencoded' }, 'id=%00'),
        ),
    ],
    [
      'invalid UTF-8 escapes in a query',
      () => attack(request('GET', '/PushNotificationMobile.asmx/GetTokenDevice?id=%C3%28%FF', {}), 'GET'),
    ],
    [
      'a NUL byte in a header',
      () => attack(Buffer.from('GET /AboutUs.asmx HTTP/1.1\r\nHost: x\r\nX-A: a\u0000b\r\n\r\n', 'latin1'), 'GET'),
    ],
  ])('%s: a complete answer', async (_name, send) => {
    const r = await send();
    expect(r.status).toBeGreaterThanOrEqual(200);
  });
});

describe('malformed escapes in every part of the URL', () => {
  test.each([
    ['the endpoint name', '/Push%zzNotificationMobile.asmx', 400],
    ['the endpoint name, cut short', '/PushNotificationMobile%.asmx', 400],
    ['the operation name', '/PushNotificationMobile.asmx/GetTokenDevice%', 400],
    ['the operation name, an escaped control character', '/PushNotificationMobile.asmx/GetTokenDevice%C2%80', 400],
    ['a NUL in the path', '/PushNotificationMobile.asmx/GetTokenDevice%00', 400],
    ['a virtual directory', '/School%/PushNotificationMobile.asmx', 400],
  ])('in %s: IIS\'s 400 "The request URL is invalid."', async (_name, target, status) => {
    for (const method of ['GET', 'POST']) {
      const r = await attack(
        request(method, target, { 'Content-Type': 'application/x-www-form-urlencoded' }, method === 'POST' ? 'id=1' : ''),
        method,
      );
      expect(r.status).toBe(status);
      expect(r.body.toString()).toContain('HTTP Error 400. The request URL is invalid.');
    }
  });

  test('in the query string: kept as written, as ASP.NET reads it', async () => {
    const r = await attack(request('GET', '/PushNotificationMobile.asmx/GetTokenDevice?id=%zz%', {}), 'GET');
    expect(r.status).toBe(200);
    expect(r.body.toString()).toContain('xsi:nil="true"');
  });
});

describe('afterwards', () => {
  test('the service still answers, and the memory it holds grew by less than 50 MB across the whole set', async () => {
    const r = await soap11(tokenRequest('dev-1001'));
    expect(r.body.toString()).toContain('fcm:APA91bH-token-1001');
    expect(retained() - retainedBefore).toBeLessThan(50 * 1024 * 1024);
  });
});

// After the memory check above: this body's 4 MB are the test's own as much as the service's.
describe('cost', () => {
  // Each segment is searched for `=` only up to its own end: 4 million of them once took two minutes.
  test('a 4 MB form of segments without a name is answered', async () => {
    const r = await attack(
      request(
        'POST',
        '/PushNotificationMobile.asmx/GetTokenDevice',
        { 'Content-Type': 'application/x-www-form-urlencoded' },
        'x&'.repeat(2_000_000),
      ),
      'POST',
      30_000,
    );
    expect(r.body.toString()).toBe('Missing parameter: id.\r\n');
  }, 40_000);
});
