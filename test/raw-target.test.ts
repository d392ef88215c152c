import http from 'node:http';
import net from 'node:net';
import type { RawResponse } from '../scripts/fuzz/wire';
import { RequestLines } from '../src/transport/raw-target';
import { rawExchange } from './helpers/raw-exchange';
import { type Service, startService } from './helpers/service';

/**
 * Raw bytes of 0x80 and above in a request target, as a client that does not %-escape an Arabic
 * value sends them. http.sys reads them as it reads their %-escapes (UTF-8), so the answer must be the
 * escaped request's, byte for byte but for the request id and date; node's parser alone refuses them
 * (400 Invalid URL). Only request lines are escaped: the same bytes in a header or a body are not.
 */
jest.setTimeout(60_000);

let service: Service;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.kill());

const SCHOOL = 'http://مدرسة.example';
const schoolPath = (value: string) => `/NotificationNotes.asmx/GetStudentSchool?school_base_url=${value}&show_active=1`;
const utf8 = (s: string) => Buffer.from(s, 'utf8');

/** Writes `bytes` on one connection and reads every answer until the server ends it (liveness only). */
async function exchange(bytes: Buffer): Promise<RawResponse[]> {
  const { responses, ended } = await rawExchange(service.port, bytes, 20_000);
  if (ended === 'open') throw new Error(`no end after 20 s, ${responses.length} answers read`);
  return responses;
}

const get = (target: Buffer, close = true) =>
  Buffer.concat([utf8('GET '), target, utf8(` HTTP/1.1\r\nHost: 127.0.0.1\r\n${close ? 'Connection: close\r\n' : ''}\r\n`)]);
const summary = (r: RawResponse) => ({ status: r.status, type: r.headers['content-type'], body: r.body.toString('utf8') });

describe('raw bytes in a request target', () => {
  test('a GET query with raw UTF-8 is answered as its %-escaped form (the Arabic school found)', async () => {
    const [escaped] = await exchange(get(utf8(schoolPath(encodeURIComponent(SCHOOL)))));
    const [raw] = await exchange(get(utf8(schoolPath(SCHOOL))));
    expect(escaped!.status).toBe(200);
    expect(escaped!.body.toString()).toContain('<id_student>');
    expect(summary(raw!)).toEqual(summary(escaped!));
  });

  test('an operation name with a raw byte: the name .NET reads, refused as not valid', async () => {
    const [raw] = await exchange(get(utf8('/PushNotificationMobile.asmx/GetTokenDevicé?id=1')));
    const [escaped] = await exchange(get(utf8('/PushNotificationMobile.asmx/GetTokenDevic%C3%A9?id=1')));
    expect(raw!.status).toBe(500);
    expect(summary(raw!)).toEqual(summary(escaped!));
  });

  test('on a kept-alive connection, in a request pipelined behind a GET, and behind a POST whose body ends in the same write', async () => {
    const [alone] = await exchange(get(utf8(schoolPath(encodeURIComponent(SCHOOL)))));
    const form = 'id=dev-1001';
    const post = utf8(
      `POST /PushNotificationMobile.asmx/GetTokenDevice HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${form.length}\r\n\r\n${form}`,
    );
    const answers = await exchange(Buffer.concat([get(utf8('/AboutUs.asmx/GetAboutUs'), false), post, get(utf8(schoolPath(SCHOOL)))]));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(summary(answers[2]!)).toEqual(summary(alone!));
  });

  test('a request line longer than a slice (pacing.ts gives the parser 1 KiB at a time), raw bytes on both sides of the cut', async () => {
    const padding = 'x'.repeat(1500);
    const [escaped] = await exchange(get(utf8(`${schoolPath(encodeURIComponent(SCHOOL))}&pad=${encodeURIComponent(`é${padding}é`)}`)));
    const [raw] = await exchange(get(utf8(`${schoolPath(SCHOOL)}&pad=é${padding}é`)));
    expect(summary(raw!)).toEqual(summary(escaped!));
  });

  test("request filtering's limits count a raw byte as one, as IIS counts the query as sent", async () => {
    // 1,500 bytes sent (3,000 once escaped): served; 2,100 sent: over maxQueryString (2,048).
    const query = (bytes: number) =>
      `/PushNotificationMobile.asmx/GetTokenDevice?id=dev-1001&x=${'é'.repeat((bytes - 'id=dev-1001&x='.length) / 2)}`;
    const [within] = await exchange(get(utf8(query(1500))));
    const [over] = await exchange(get(utf8(query(2100))));
    expect(within!.status).toBe(200);
    expect(over!.status).toBe(404);
    expect(over!.body.toString()).toContain('404 - File or directory not found.');
  });

  test('the same bytes in a header and in a form body are left as sent', async () => {
    // A SOAPAction the service does not know is quoted back whole: raw, not escaped.
    const envelope =
      '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body/></soap:Envelope>';
    const soap = utf8(
      `POST /PushNotificationMobile.asmx HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/xml; charset=utf-8\r\nSOAPAction: "urn:é"\r\nContent-Length: ${envelope.length}\r\nConnection: close\r\n\r\n${envelope}`,
    );
    const [fault] = await exchange(soap);
    expect(fault!.body.toString('utf8')).not.toContain('%C3%A9');
    const form = utf8(`school_base_url=${SCHOOL}&show_active=1`);
    const post = Buffer.concat([
      utf8(
        `POST /NotificationNotes.asmx/GetStudentSchool HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded; charset=utf-8\r\nContent-Length: ${form.length}\r\nConnection: close\r\n\r\n`,
      ),
      form,
    ]);
    const [answer] = await exchange(post);
    expect(answer!.status).toBe(200);
    expect(answer!.body.toString()).toContain('<id_student>');
  });
});

test('every supported Node gives the parser callbacks raw-target.ts relies on (else raw bytes are refused, as node refuses them)', async () => {
  const server = http.createServer((_req, res) => res.end());
  const hooked = await new Promise<boolean>((resolve) => {
    server.on('connection', (socket: net.Socket & { parser?: unknown }) => {
      const lines = new RequestLines(socket.parser);
      // Hooked, a request line with raw bytes is given to the parser by itself; not hooked, all at once.
      resolve(lines.size(Buffer.from('GET /é HTTP/1.1\r\n\r\n')) === Buffer.byteLength('GET /é HTTP/1.1\r\n'));
      lines.release();
      socket.destroy();
    });
    server.listen(0, '127.0.0.1', () => net.connect((server.address() as net.AddressInfo).port, '127.0.0.1').on('error', () => undefined));
  });
  server.close();
  expect(hooked).toBe(true);
});

test("a second copy of the module (jest loads one per test file) takes over the parsers node pooled with the first copy's callbacks", async () => {
  /** A server whose connection hooks its parser with `copy` of raw-target.ts; resolves once that connection has closed (its parser back in node's pool). */
  const hookAndClose = (copy: typeof import('../src/transport/raw-target')) =>
    new Promise<boolean>((resolve) => {
      const server = http.createServer();
      server.on('connection', (socket: net.Socket & { parser?: unknown }) => {
        const lines = new copy.RequestLines(socket.parser);
        const hooked = lines.size(Buffer.from('GET /é HTTP/1.1\r\n\r\n')) === Buffer.byteLength('GET /é HTTP/1.1\r\n');
        socket.once('close', () => {
          lines.release();
          server.close();
          // After node's own close handling, which frees the parser.
          setImmediate(() => resolve(hooked));
        });
        socket.destroy();
      });
      server.listen(0, '127.0.0.1', () =>
        net.connect((server.address() as net.AddressInfo).port, '127.0.0.1').on('error', () => undefined),
      );
    });
  const mine = await import('../src/transport/raw-target');
  let other: typeof import('../src/transport/raw-target') | undefined;
  jest.isolateModules(() => {
    other = require('../src/transport/raw-target');
  });
  expect(other!.RequestLines).not.toBe(mine.RequestLines);
  // Node hands each next connection the parser freed last: this copy's callbacks on it, then the
  // other copy's. Each copy must still hook it.
  expect(await hookAndClose(mine)).toBe(true);
  expect(await hookAndClose(other!)).toBe(true);
  expect(await hookAndClose(mine)).toBe(true);
});
