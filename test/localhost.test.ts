import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { protocolVerdict, type RequestLine } from '../src/bindings/protocols';
import { loadConfig, type Protocol } from '../src/config';
import type { RequestKind } from '../src/contract/route';
import { isLocalCaller } from '../src/transport/context';
import { createTestApp, type TestApp } from './helpers/app';

/**
 * Issue 23: PROTOCOLS takes every name `<webServices><protocols>` takes, HttpPostLocalhost among them,
 * with .NET's meaning: HTTP POST for a caller on this machine (HttpRequest.IsLocal), answered for any
 * other caller as with HTTP POST off; behind TRUST_PROXY the caller is the forwarded client. The help
 * page's test form follows the same rule, and the WSDL never has the HTTP POST binding for it.
 *
 * ASMX asks `request.Url.IsLoopback || request.IsLocal`. A remote caller is made by connecting from
 * 127.0.0.2 to the service on 127.0.0.1 (IsLocal counts only 127.0.0.1, ::1 and the connection's own
 * local address) and asking for a URL on a host that is not loopback (`Host: school.example`).
 */

const NET_DEFAULT = 'HttpSoap12,HttpSoap,HttpPostLocalhost,Documentation';

describe('PROTOCOLS names', () => {
  const names = (value: string) => [...loadConfig({ PROTOCOLS: value }).protocols].sort();

  test('every WebServiceProtocols name, without regard to case', () => {
    expect(names('httppostlocalhost, HTTPSOAP')).toEqual(['HttpPostLocalhost', 'HttpSoap']);
    expect(names(NET_DEFAULT)).toEqual(['Documentation', 'HttpPostLocalhost', 'HttpSoap', 'HttpSoap12']);
  });

  test('AnyHttpSoap is both SOAP versions; Unknown is nothing', () => {
    expect(names('AnyHttpSoap')).toEqual(['HttpSoap', 'HttpSoap12']);
    expect(names('Unknown')).toEqual([]);
    expect(names('unknown,HttpGet')).toEqual(['HttpGet']);
  });

  test('a name the section does not know is refused, the known ones listed', () => {
    expect(() => loadConfig({ PROTOCOLS: 'HttpPostLocal' })).toThrow(
      /^PROTOCOLS must list names from HttpSoap, HttpSoap12, HttpGet, HttpPost, HttpPostLocalhost, Documentation, AnyHttpSoap, Unknown, got "HttpPostLocal"$/,
    );
  });
});

/** A request as isLocalCaller reads it: the socket's two ends and the headers (by default a URL on a host that is not loopback). */
const fakeRequest = (
  remoteAddress: string | undefined,
  localAddress: string,
  headers: http.IncomingHttpHeaders = { host: 'school.example' },
) => ({ socket: { remoteAddress, localAddress, localPort: 80 }, headers }) as unknown as http.IncomingMessage;
const direct = { trustProxy: false, publicUrl: null };
const proxied = { trustProxy: true, publicUrl: null };

describe('isLocalCaller: .NET HttpRequest.IsLocal, and the forwarded client behind a trusted proxy', () => {
  // [what, the socket's peer, its own local address, local?]
  test.each([
    ['127.0.0.1', '127.0.0.1', '127.0.0.1', true],
    ['::1', '::1', '::1', true],
    ['::ffff:127.0.0.1', '::ffff:127.0.0.1', '::ffff:127.0.0.1', true],
    ["the connection's own address", '192.0.2.10', '192.0.2.10', true],
    ['the own address, IPv4-mapped on one side', '::ffff:192.0.2.10', '192.0.2.10', true],
    ['another loopback address than 127.0.0.1', '127.0.0.2', '127.0.0.1', false],
    ['another host', '192.0.2.11', '192.0.2.10', false],
    ['no peer (the socket is gone)', undefined, '127.0.0.1', false],
  ] as [string, string | undefined, string, boolean][])('without TRUST_PROXY, a peer %s: %s', (_what, peer, own, local) => {
    expect(isLocalCaller(fakeRequest(peer, own), direct)).toBe(local);
  });

  test.each([
    ['a loopback client', '127.0.0.1', true],
    ['an IPv6 loopback client as IIS ARR writes it', '[::1]:50123', true],
    ['a client elsewhere', '203.0.113.9', false],
    ["a client that claims loopback before the proxy's entry", '127.0.0.1, 203.0.113.9', false],
    ['an entry that is no address', 'unknown', false],
  ])('with TRUST_PROXY and a proxy on this machine, %s (%s)', (_what, forwarded, local) => {
    expect(isLocalCaller(fakeRequest('127.0.0.1', '127.0.0.1', { host: 'school.example', 'x-forwarded-for': forwarded }), proxied)).toBe(
      local,
    );
  });

  test('with TRUST_PROXY, a request whose client the proxy did not name is not local', () => {
    expect(isLocalCaller(fakeRequest('127.0.0.1', '127.0.0.1'), proxied)).toBe(false);
  });
});

describe("isLocalCaller: .NET's Request.Url.IsLoopback, the URL the request was made to", () => {
  const REMOTE_PEER = '192.0.2.11';
  test.each([
    ['localhost', true],
    ['LocalHost:8080', true],
    ['loopback', true],
    ['127.0.0.1:8080', true],
    ['127.3.2.1', true],
    ['[::1]:8080', true],
    ['[::ffff:127.0.0.1]', true],
    ['[::127.0.0.1]', true],
    ['[::ffff:127.0.0.2]', false],
    ['school.example', false],
    ['localhost.school.example', false],
    ['128.0.0.1', false],
  ])('Host: %s from a remote peer', (host, local) => {
    expect(isLocalCaller(fakeRequest(REMOTE_PEER, '192.0.2.10', { host }), direct)).toBe(local);
  });

  test('no Host header (HTTP/1.0): the address the connection reached, as IIS then names the server', () => {
    expect(isLocalCaller(fakeRequest(REMOTE_PEER, '127.0.0.1', {}), direct)).toBe(true);
    expect(isLocalCaller(fakeRequest(REMOTE_PEER, '192.0.2.10', {}), direct)).toBe(false);
  });

  test('behind TRUST_PROXY, the host the proxy says the client asked for, not the one it asked us for', () => {
    const via = (host: string, forwardedHost?: string) =>
      isLocalCaller(
        fakeRequest('127.0.0.1', '127.0.0.1', {
          host,
          'x-forwarded-for': '203.0.113.9',
          ...(forwardedHost ? { 'x-forwarded-host': forwardedHost } : {}),
        }),
        proxied,
      );
    expect(via('127.0.0.1:8080', 'school.example')).toBe(false);
    expect(via('school.example')).toBe(false);
    expect(via('school.example', 'localhost')).toBe(true);
  });

  test("with PUBLIC_URL, its host is the request's", () => {
    expect(
      isLocalCaller(fakeRequest(REMOTE_PEER, '192.0.2.10', { host: 'localhost' }), {
        trustProxy: false,
        publicUrl: 'https://school.example/S',
      }),
    ).toBe(false);
    expect(isLocalCaller(fakeRequest(REMOTE_PEER, '192.0.2.10'), { trustProxy: false, publicUrl: 'http://localhost:8080' })).toBe(true);
  });
});

describe('the protocols switch with HttpPostLocalhost: a remote POST as with HTTP POST off, the rest as with it on', () => {
  const sets = [
    NET_DEFAULT,
    'HttpPostLocalhost',
    'HttpPostLocalhost,HttpGet',
    'HttpSoap,HttpPostLocalhost',
    'HttpPostLocalhost,HttpGet,Documentation',
  ];
  const kinds: RequestKind[] = ['soap', 'page', 'httpget', 'httppost'];
  const set = (value: string) => loadConfig({ PROTOCOLS: value }).protocols;
  // Each kind of request as the factories read it: the method and the path after `.asmx`.
  const LINE: Record<RequestKind, RequestLine> = {
    soap: { method: 'POST', pathInfo: '' },
    page: { method: 'GET', pathInfo: '' },
    httpget: { method: 'GET', pathInfo: '/GetTokenDevice' },
    httppost: { method: 'POST', pathInfo: '/GetTokenDevice' },
  };
  const without = (value: string) => new Set([...set(value)].filter((p) => p !== 'HttpPostLocalhost')) as ReadonlySet<Protocol>;
  const withPost = (value: string) => new Set([...without(value), 'HttpPost']) as ReadonlySet<Protocol>;

  test.each(sets.flatMap((s) => kinds.map((k) => [s, k] as const)))('PROTOCOLS=%s, %s', (value, kind) => {
    const ask = (enabled: ReadonlySet<Protocol>) => (local: boolean) => protocolVerdict(LINE[kind], enabled, () => local);
    // A POST: remote as with HTTP POST off. Anything else (and a local POST): as with HTTP POST on.
    expect(ask(set(value))(false)).toBe(ask(kind === 'httppost' ? without(value) : withPost(value))(false));
    expect(ask(set(value))(true)).toBe(ask(withPost(value))(true));
  });

  test('the factories in ASMX order: HttpPostLocalhost refuses a GET (405) unless a later one answers', () => {
    expect(protocolVerdict(LINE.httpget, set('HttpPostLocalhost'), () => true)).toBe(405);
    expect(protocolVerdict(LINE.httpget, set(NET_DEFAULT), () => true)).toBe(500);
    // HttpGet comes after HttpPostLocalhost: its 405 for a remote POST stands.
    expect(protocolVerdict(LINE.httppost, set('HttpPostLocalhost,HttpGet'), () => false)).toBe(405);
  });

  test('locality is asked only when HttpPostLocalhost decides', () => {
    const local = jest.fn(() => true);
    protocolVerdict(LINE.httppost, set('HttpSoap,HttpPost,HttpPostLocalhost'), local);
    protocolVerdict(LINE.httpget, set(NET_DEFAULT), local);
    expect(local).not.toHaveBeenCalled();
  });
});

interface Answer {
  status: number;
  type: string | undefined;
  body: string;
}

/** One request from `from` to the app listening on 127.0.0.1, for a URL on `Host: school.example` unless `headers` say otherwise. */
function call(port: number, method: string, path: string, from: string, headers: Record<string, string> = {}, body = ''): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        localAddress: from,
        headers: {
          Host: 'school.example',
          ...headers,
          ...(method === 'POST'
            ? { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': String(Buffer.byteLength(body)) }
            : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], body: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Apps with each PROTOCOLS (and TRUST_PROXY) setting, listening on 127.0.0.1 for the whole file. */
function apps(settings: Record<string, Record<string, string>>): Record<string, number> {
  const ports: Record<string, number> = {};
  const running: { t: TestApp; server: http.Server }[] = [];
  beforeAll(async () => {
    for (const [name, env] of Object.entries(settings)) {
      const t = await createTestApp(env);
      const server = http.createServer(t.app).listen(0, '127.0.0.1');
      await new Promise((r) => server.once('listening', r));
      ports[name] = (server.address() as AddressInfo).port;
      running.push({ t, server });
    }
  });
  afterAll(async () => {
    for (const { t, server } of running) {
      await new Promise((r) => server.close(r));
      await t.close();
    }
  });
  return ports;
}

describe('HttpPostLocalhost served', () => {
  const port = apps({
    localhost: { PROTOCOLS: NET_DEFAULT },
    postOff: { PROTOCOLS: 'HttpSoap12,HttpSoap,Documentation' },
    postOn: { PROTOCOLS: 'HttpSoap12,HttpSoap,HttpPost,Documentation' },
    proxied: { PROTOCOLS: NET_DEFAULT, TRUST_PROXY: 'true' },
  });
  const LOCAL = '127.0.0.1';
  const REMOTE = '127.0.0.2';
  const post = (app: string, from: string, headers: Record<string, string> = {}) =>
    call(port[app]!, 'POST', '/PushNotificationMobile.asmx/GetTokenDevice', from, headers, 'id=dev-1001');
  const helpPage = async (app: string, from: string, headers: Record<string, string> = {}) =>
    (await call(port[app]!, 'GET', '/PushNotificationMobile.asmx?op=GetTokenDevice', from, headers)).body;

  test('a local caller is answered as with HTTP POST on', async () => {
    const answer = await post('localhost', LOCAL);
    expect(answer.status).toBe(200);
    expect(answer).toEqual(await post('postOn', LOCAL));
    expect(answer.body).toContain('<string xmlns="http://tempuri.org/">');
  });

  test('a remote caller is refused exactly as with HTTP POST off', async () => {
    const answer = await post('localhost', REMOTE);
    expect(answer.status).toBe(500);
    expect(answer).toEqual(await post('postOff', REMOTE));
  });

  test('behind TRUST_PROXY, a forwarded client elsewhere is refused though the proxy is on this machine', async () => {
    const refused = await post('postOff', REMOTE);
    expect(await post('proxied', LOCAL, { 'X-Forwarded-For': '203.0.113.9' })).toEqual(refused);
    expect(await post('proxied', LOCAL)).toEqual(refused);
    expect(await post('proxied', LOCAL, { 'X-Forwarded-For': '127.0.0.1, 203.0.113.9' })).toEqual(refused);
    expect((await post('proxied', REMOTE, { 'X-Forwarded-For': '127.0.0.1' })).status).toBe(200);
  });

  test('a remote caller that asks for a loopback URL is local, as in ASMX (Url.IsLoopback)', async () => {
    const served = await post('postOn', LOCAL);
    expect(await post('localhost', REMOTE, { Host: `127.0.0.1:${port.localhost}` })).toEqual(served);
    expect(await post('localhost', REMOTE, { Host: 'localhost' })).toEqual(served);
    expect(await post('proxied', LOCAL, { 'X-Forwarded-For': '203.0.113.9', 'X-Forwarded-Host': 'localhost' })).toEqual(served);
  });

  test('the help page shows the test form and the HTTP POST sample to a local caller only', async () => {
    const local = await helpPage('localhost', LOCAL);
    expect(local).toContain('<form target="_blank"');
    expect(local).toContain('<h3>HTTP POST</h3>');
    expect(local).toBe(await helpPage('postOn', LOCAL));

    for (const remote of [await helpPage('localhost', REMOTE), await helpPage('proxied', LOCAL, { 'X-Forwarded-For': '203.0.113.9' })]) {
      expect(remote).not.toContain('<form');
      expect(remote).not.toContain('<h3>HTTP POST</h3>');
      expect(remote).toContain('The test form is only available for requests from the local machine.');
      expect(remote).toBe(await helpPage('postOff', REMOTE));
    }
  });

  test('with no HTTP POST at all, a local caller is told what the help generator tells it', async () => {
    const page = await helpPage('postOff', LOCAL);
    expect(page).not.toContain('<form');
    expect(page).toContain('The test form is only available for methods with primitive types as parameters.');
  });

  test('the WSDL and the disco document have no HTTP POST binding, for any caller', async () => {
    for (const query of ['wsdl', 'disco']) {
      const path = `/PushNotificationMobile.asmx?${query}`;
      const off = await call(port.postOff!, 'GET', path, LOCAL);
      for (const from of [LOCAL, REMOTE]) expect(await call(port.localhost!, 'GET', path, from)).toEqual(off);
    }
  });
});
