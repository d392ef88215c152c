import type http from 'node:http';
import { chromium } from 'playwright-core';
import type { RawResponse } from '../scripts/fuzz/wire';
import { HostErrors } from '../src/basics/errors';
import { loadConfig } from '../src/config';
import { adminHosts } from '../src/process/admin-hosts';
import { rawExchange } from './helpers/raw-exchange';
import { request, type Service, servicesPerTest, TOKEN_PATH } from './helpers/service';

/**
 * The Host header on both listeners of the service as built. The admin listener answers only a Host
 * that names it (loopback names, IP addresses, ADMIN_HOST and ADMIN_ALLOWED_HOSTS): any other is what
 * a DNS-rebinding page sends, refused with 421 and counted. Two Host headers are a 400 on both
 * listeners (RFC 9112 3.2), http.sys's page on the service's, and the connection is closed.
 */
jest.setTimeout(60_000);
const service = servicesPerTest();

/** GET `path` with `host` as its Host header (undefined: none, as an HTTP/1.0 client may send). */
async function asHost(port: number, path: string, host: string | undefined): Promise<RawResponse> {
  const r = await rawExchange(
    port,
    `GET ${path} HTTP/1.${host === undefined ? 0 : 1}\r\n${host === undefined ? '' : `Host: ${host}\r\n`}Connection: close\r\n\r\n`,
  );
  expect(r.responses).toHaveLength(1);
  return r.responses[0]!;
}

const metricsOf = async (s: Service) => (await request(s.adminPort, '/metrics')).body;
/** Once the service has closed every client connection (its open count is back at 0): liveness only. */
async function allClosed(s: Service): Promise<void> {
  for (let i = 0; !/^asmx_connections_open 0$/m.test(await metricsOf(s)); i += 1) {
    if (i > 100) throw new Error('a connection is still open after 10 s');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The request log lines once `id`'s own is written: a line any earlier request got is written before it. */
async function requestLinesUntil(s: Service, id: string): Promise<string[]> {
  expect((await request(s.port, TOKEN_PATH, { headers: { 'X-Request-Id': id } })).status).toBe(200);
  await s.waitFor((l) => l.msg === 'request' && l.reqId === id);
  return s.lines.filter((l) => l.msg === 'request').map((l) => String(l.reqId));
}

const refusals = async (s: Service, reason: string) =>
  Number(new RegExp(`^asmx_admin_refused_total\\{reason="${reason}"\\} (\\S+)$`, 'm').exec(await metricsOf(s))?.[1]);

describe('the admin listener answers only its own names', () => {
  test('a foreign Host (the name a DNS-rebinding page has) gets 421 on every path, counted and logged once', async () => {
    const s = await service();
    expect(await refusals(s, 'host')).toBe(0);
    for (const path of ['/metrics', '/console', '/', '/healthz', '/readyz']) {
      const r = await asHost(s.adminPort, path, `rebind.attacker.example:${s.adminPort}`);
      expect([r.status, r.headers['content-type'], r.body.toString()]).toEqual([
        421,
        'text/plain; charset=utf-8',
        'misdirected request: the Host is not a name of this listener (ADMIN_ALLOWED_HOSTS)\n',
      ]);
    }
    // Names that only look like loopback ones, and hosts no URL can hold.
    for (const host of [
      'localhost.attacker.example',
      'localhost-evil',
      '127.0.0.1.nip.io',
      '0x7f.0.0.1',
      'localhost:80:80',
      '',
      '[::1',
      'local host',
    ]) {
      expect([host, (await asHost(s.adminPort, '/metrics', host)).status]).toEqual([host, 421]);
    }
    expect(await refusals(s, 'host')).toBe(13);
    // The log reaches the test through the service's stderr, after the counter: waited for, then counted.
    await s.waitFor((l) => l.msg.startsWith('admin listener: request refused'));
    const logged = s.lines.filter((l) => l.msg.startsWith('admin listener: request refused'));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: 'warn', host: `rebind.attacker.example:${s.adminPort}`, refused: 1 });
  });

  test('loopback names and IP addresses, any port and case, are served: the browser on this machine, Prometheus, a kubelet probe', async () => {
    const s = await service();
    const p = s.adminPort;
    for (const host of [
      `127.0.0.1:${p}`,
      `localhost:${p}`,
      'LocalHost',
      'localhost.',
      `[::1]:${p}`,
      '127.0.0.2:9999',
      '10.1.2.3:9464',
      '[2001:db8::5]:9464',
      'localhost:',
    ]) {
      const metrics = await asHost(p, '/metrics', host);
      expect([host, metrics.status]).toEqual([host, 200]);
      expect(metrics.body.toString()).toMatch(/^asmx_ready 1$/m);
      expect([host, (await asHost(p, '/console', host)).status]).toEqual([host, 200]);
      expect([host, (await asHost(p, '/healthz', host)).status]).toEqual([host, 200]);
    }
    // No Host at all (HTTP/1.0): no browser sends that, a simple health checker may.
    expect((await asHost(p, '/healthz', undefined)).status).toBe(200);
    expect(await refusals(s, 'host')).toBe(0);
  });

  test("ADMIN_ALLOWED_HOSTS names more: a reverse proxy's or a tunnel's name, any case and port; nothing else", async () => {
    const s = await service({ env: { ADMIN_ALLOWED_HOSTS: 'console.school.example, Metrics.Internal' } });
    for (const host of ['console.school.example', 'CONSOLE.school.example.:443', 'metrics.internal:9464', `localhost:${s.adminPort}`]) {
      expect([host, (await asHost(s.adminPort, '/console', host)).status]).toEqual([host, 200]);
    }
    for (const host of ['school.example', 'x.console.school.example', 'console.school.example.attacker.example', 'internal']) {
      expect([host, (await asHost(s.adminPort, '/console', host)).status]).toEqual([host, 421]);
    }
  });

  test('ADMIN_HOST is one of its names when it is a name (the rule, on requests as node reads them)', () => {
    const verdict = (env: Record<string, string>, host: string) =>
      adminHosts(loadConfig(env)).verdict({ headers: { host }, rawHeaders: ['Host', host] } as unknown as http.IncomingMessage);
    expect(verdict({ ADMIN_HOST: 'metrics-node.internal' }, 'Metrics-Node.Internal:9464')).toBe('ours');
    expect(verdict({}, 'metrics-node.internal:9464')).toBe('foreign');
    expect(verdict({ ADMIN_HOST: '0.0.0.0' }, '0.0.0.0:9464')).toBe('ours');
    expect(verdict({ ADMIN_HOST: '0.0.0.0' }, 'pod.attacker.example')).toBe('foreign');
  });

  test("with WORKERS=2 the primary's admin listener holds to the same rule", async () => {
    const s = await service({ env: { WORKERS: '2' } });
    expect((await asHost(s.adminPort, '/metrics', 'rebind.attacker.example')).status).toBe(421);
    expect((await asHost(s.adminPort, '/metrics', `127.0.0.1:${s.adminPort}`)).status).toBe(200);
    expect(await refusals(s, 'host')).toBe(1);
  });

  // Debian's chromium, found by jest.config.js as for test/console-browser.test.ts (REQUIRE_BROWSER=1: its absence fails).
  const describeBrowser = process.env.TEST_CHROMIUM || process.env.REQUIRE_BROWSER === '1' ? describe : describe.skip;
  describeBrowser('in chromium', () => {
    test('a page under a foreign name that resolves to the admin listener reads nothing; localhost reads the console', async () => {
      expect(process.env.TEST_CHROMIUM).toBeTruthy();
      const s = await service();
      // What a rebinding achieves: the page's own name now resolving to the listener's address.
      const browser = await chromium.launch({
        executablePath: process.env.TEST_CHROMIUM,
        args: ['--no-sandbox', '--host-resolver-rules=MAP rebind.attacker.example 127.0.0.1'],
      });
      try {
        const page = await browser.newPage();
        const foreign = await page.goto(`http://rebind.attacker.example:${s.adminPort}/metrics`);
        expect(foreign?.status()).toBe(421);
        expect(await page.content()).not.toContain('asmx_');
        const own = await page.goto(`http://localhost:${s.adminPort}/console`);
        expect(own?.status()).toBe(200);
        expect(await page.title()).not.toBe('');
      } finally {
        await browser.close();
      }
    });
  });
});

describe('two Host headers: 400 on both listeners, and the connection closed', () => {
  const invalidHeader = HostErrors.invalidHeader();

  test.each([
    ['two names', 'Host: 127.0.0.1\r\nHost: attacker.example\r\n', TOKEN_PATH],
    ['the same name twice', 'Host: 127.0.0.1\r\nHost: 127.0.0.1\r\n', TOKEN_PATH],
    ['in other cases', 'host: 127.0.0.1\r\nHOST: attacker.example\r\n', TOKEN_PATH],
    [
      'apart, with an absolute-form target',
      'Host: 127.0.0.1\r\nAccept: */*\r\nhOsT: attacker.example\r\n',
      'http://127.0.0.1/PushNotificationMobile.asmx/GetTokenDevice?id=dev-1001',
    ],
  ])("the service: %s get http.sys's page, and nothing after it is read", async (_name, hosts, target) => {
    const s = await service();
    // A second request pipelined behind: http.sys reads nothing after a request it could not read.
    const r = await rawExchange(
      s.port,
      `GET ${target} HTTP/1.1\r\n${hosts}\r\nGET ${TOKEN_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: pipelined\r\n\r\n`,
    );
    expect(r.responses).toHaveLength(1);
    expect(r.ended).toBe('end');
    const [answer] = r.responses;
    expect([answer!.status, answer!.headers['content-type'], answer!.headers.connection, answer!.body.toString()]).toEqual([
      400,
      invalidHeader.contentType,
      'close',
      invalidHeader.body,
    ]);
    // Neither reached the app (no request line: the refused one went no further than http.sys's
    // would, the pipelined one was never run); one Host is served as before.
    await allClosed(s);
    expect(await requestLinesUntil(s, 'after')).toEqual(['after']);
  });

  test('the service: nothing pipelined behind a request refused after routing (a malformed escape) is run either', async () => {
    const s = await service();
    const r = await rawExchange(
      s.port,
      `GET /x%zz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: refused\r\n\r\nGET ${TOKEN_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Request-Id: pipelined\r\n\r\n`,
    );
    expect([r.responses.map((x) => [x.status, x.body.toString()]), r.ended]).toEqual([[[400, HostErrors.invalidUrl().body]], 'end']);
    await allClosed(s);
    expect(await requestLinesUntil(s, 'after')).toEqual(['refused', 'after']);
  });

  test('the service: a POST with two Host headers is answered before its body, and closed without a reset', async () => {
    const s = await service();
    const body = '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body/></soap:Envelope>';
    const r = await rawExchange(
      s.port,
      `POST /PushNotificationMobile.asmx HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\nContent-Type: text/xml; charset=utf-8\r\nSOAPAction: "http://tempuri.org/GetTokenDevice"\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    expect([r.responses.map((x) => x.status), r.ended]).toEqual([[400], 'end']);
  });

  test('the service with WORKERS=2: the same page', async () => {
    const s = await service({ env: { WORKERS: '2' } });
    const r = await rawExchange(s.port, `GET ${TOKEN_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: attacker.example\r\n\r\n`);
    expect([r.responses.map((x) => [x.status, x.body.toString()]), r.ended]).toEqual([[[400, invalidHeader.body]], 'end']);
  });

  test('the admin listener: 400 in plain text, counted, and closed', async () => {
    const s = await service();
    for (const hosts of ['Host: 127.0.0.1\r\nHost: 127.0.0.1\r\n', 'Host: localhost\r\nhost: rebind.attacker.example\r\n']) {
      const r = await rawExchange(s.adminPort, `GET /metrics HTTP/1.1\r\n${hosts}\r\nGET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      expect(r.responses.map((x) => [x.status, x.headers.connection, x.body.toString()])).toEqual([
        [400, 'close', 'bad request: more than one Host header\n'],
      ]);
      expect(r.ended).toBe('end');
    }
    expect(await refusals(s, 'two_hosts')).toBe(2);
    expect(await refusals(s, 'host')).toBe(0);
  });
});
