import fs from 'node:fs';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { recordExchange, samplesOf, scrape } from '../src/app/metrics';
import type { Exchange } from '../src/transport/types';
import { loadConfig } from '../src/config';
import { createConsole } from '../src/console';
import { History, KEPT_MINUTES } from '../src/console/history';
import { renderPage } from '../src/console/page';
import { parseMetrics } from './helpers/prom-text';
import { judge } from '../src/console/verdict';
import type { ConsoleView } from '../src/console/view';
import { createAdminServer } from '../src/process/admin';
import type { DifferenceLine } from '../src/shadow/report';
import { openSqliteStore } from '../src/store/sqlite';
import { request, startService, TOKEN_PATH } from './helpers/service';

/**
 * The cut-over console's parts: the metrics text read back, the per-minute history (bounded, resets,
 * windows), the verdict and its coverage, and the page: escaped, masked,
 * served with its CSP on the admin listener. The browser test (console-browser.test.ts) shows it live.
 */

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'console-test-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const MIN = 60_000;
const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const requests = (n: number, op = 'GetTokenDevice', binding = 'soap11', status = '200') =>
  `asmx_requests_total{endpoint="PushNotificationMobile",operation="${op}",binding="${binding}",status="${status}"} ${n}`;

test('the console reads only the metrics it shows, as prom-client holds them: reading every collector would restart the event-loop delay Prometheus reads', async () => {
  recordExchange({ endpoint: 'AboutUs', operation: 'GetAboutUs', binding: 'httpget' } as Exchange, 200, 0.002);
  const samples = await samplesOf(['asmx_requests_total', 'asmx_request_duration_seconds', 'no_such_metric']);
  const names = new Set(samples.map((s) => s.name));
  expect(names).toEqual(
    new Set([
      'asmx_requests_total',
      'asmx_request_duration_seconds_bucket',
      'asmx_request_duration_seconds_sum',
      'asmx_request_duration_seconds_count',
    ]),
  );
  expect(samples).toContainEqual({
    name: 'asmx_request_duration_seconds_bucket',
    labels: { endpoint: 'AboutUs', operation: 'GetAboutUs', binding: 'httpget', le: '+Inf' },
    value: 1,
  });
  // The samples are the text /metrics writes, read back.
  const text = (await scrape()).body;
  for (const s of samples) expect(parseMetrics(text)).toContainEqual(s);
});

test('the metrics text is read back: labels (escaped values too), +Inf, comments skipped', () => {
  const s = parseMetrics(
    ['# HELP x y', '# TYPE x counter', 'x{a="1",b="q\\"uo\\\\te\\n"} 3', 'y 4.5', 'h_bucket{le="+Inf"} 7', 'bad line here'].join('\n'),
  );
  expect(s).toEqual([
    { name: 'x', labels: { a: '1', b: 'q"uo\\te\n' }, value: 3 },
    { name: 'y', labels: {}, value: 4.5 },
    { name: 'h_bucket', labels: { le: '+Inf' }, value: 7 },
  ]);
});

describe('history', () => {
  test('counts what grew since the last read, by minute; the first read is the starting point; a new series starts from 0', () => {
    const h = new History();
    h.record(parseMetrics(requests(100)), T0);
    h.record(parseMetrics(requests(103)), T0 + 10_000);
    h.record(parseMetrics([requests(105), requests(2, 'GetAboutUs', 'httpget')].join('\n')), T0 + MIN);
    expect(h.buckets('asmx_requests_total', T0 + MIN, 3, 1, 'operation')).toEqual(
      new Map([
        ['GetTokenDevice', [0, 3, 2]],
        ['GetAboutUs', [0, 0, 2]],
      ]),
    );
    expect(h.sum('asmx_requests_total', T0 + MIN, 60)).toBe(7);
    expect(h.sum('asmx_requests_total', T0 + MIN, 1)).toBe(4);
  });

  test('a sum that went down (a worker replaced) is a new starting point, never negative traffic', () => {
    const h = new History();
    h.record(parseMetrics(requests(50)), T0);
    h.record(parseMetrics(requests(20)), T0 + 1000);
    h.record(parseMetrics(requests(25)), T0 + 2000);
    expect(h.sum('asmx_requests_total', T0 + 2000, 60)).toBe(5);
  });

  test('keeps a day of minutes and no more; buckets of 15 minutes sum their minutes', () => {
    const h = new History();
    for (let m = 0; m <= KEPT_MINUTES + 30; m++) h.record(parseMetrics(requests(m)), T0 + m * MIN);
    const now = T0 + (KEPT_MINUTES + 30) * MIN;
    expect(h.sum('asmx_requests_total', now, 10 * KEPT_MINUTES)).toBe(KEPT_MINUTES);
    expect(h.buckets('asmx_requests_total', now, 2, 15).get('')).toEqual([15, 15]);
    expect((h as unknown as { minutes: unknown[] }).minutes.length).toBe(KEPT_MINUTES);
  });

  test('latency quantiles from the histogram buckets, per bucket of time', () => {
    const h = new History();
    const hist = (n: number, fast: number) =>
      parseMetrics(
        [
          `asmx_request_duration_seconds_bucket{operation="a",binding="b",le="0.001"} ${fast}`,
          `asmx_request_duration_seconds_bucket{operation="a",binding="b",le="0.1"} ${n}`,
          `asmx_request_duration_seconds_bucket{operation="a",binding="b",le="+Inf"} ${n}`,
        ].join('\n'),
      );
    h.record(hist(0, 0), T0);
    h.record(hist(100, 98), T0 + MIN);
    expect(h.quantiles(0.5, T0 + MIN, 2, 1)).toEqual([null, 0.001]);
    expect(h.quantiles(0.99, T0 + MIN, 2, 1)).toEqual([null, 0.1]);
  });
});

const NOW = T0 + 3 * 86_400_000;

/**
 * The console's history after two reads a minute apart: requests answered and compared per operation
 * (`[answered, compared]`), all over httpget and matched.
 */
function traffic(ops: Record<string, [number, number]>): History {
  const h = new History();
  const text = (scale: number) =>
    Object.entries(ops)
      .flatMap(([op, [answered, compared]]) => [
        `asmx_requests_total{endpoint="E",operation="${op}",binding="httpget",status="200"} ${answered * scale}`,
        `asmx_shadow_exchanges_total{operation="${op}",binding="httpget",outcome="match"} ${compared * scale}`,
      ])
      .join('\n');
  h.record(parseMetrics(text(0)), NOW - MIN);
  h.record(parseMetrics(text(1)), NOW);
  return h;
}

/** A view as the console reads it, with what a test changes. */
function view(over: Partial<ConsoleView> = {}, env: Record<string, string> = {}): ConsoleView {
  const config = loadConfig({ SHADOW_URL: 'http://user:secret@legacy-host/', SMS_GATEWAY: 'log', ...env });
  return {
    now: NOW,
    config,
    ready: { ready: true },
    samples: [],
    // AuthCode has effects: never copied, so not in the coverage.
    history: traffic({ GetTokenDevice: [1000, 1000], GetAboutUs: [200, 199], AuthCode: [50, 0] }),
    sms: {
      notSending: undefined,
      counts: { pending: 0, delivered: 3, failed: 0, expired: 0 },
      oldestPending: null,
      failures: [],
      storeError: null,
    },
    shadow: { totals: { since: new Date(T0).toISOString(), compared: 1234, real: 0, noise: 0 }, latest: [] },
    ...over,
  };
}

describe('the verdict', () => {
  test('safe: requests compared over days, no real difference, ready, codes sent', () => {
    const verdict = judge(view());
    expect(verdict).toMatchObject({ go: true, line: '1234 requests compared over 3 days, 0 real differences.', blockers: [] });
    expect(verdict.coverage).toEqual({
      overall: { operation: '', answered: 1200, compared: 1199 },
      operations: [
        { operation: 'GetAboutUs', answered: 200, compared: 199 },
        { operation: 'GetTokenDevice', answered: 1000, compared: 1000 },
      ],
    });
    expect(renderPage(view())).toContain(
      '<p id="verdict-coverage">Coverage: 99.9% of the answered requests compared (1,199 / 1,200, last day; at least 99% overall and per operation): GetAboutUs 99.5% (199 / 200), GetTokenDevice 100.0% (1,000 / 1,000).</p>',
    );
  });

  test('thin coverage refuses the switch: overall, or one operation with traffic, under 99%, or none measured since the start', () => {
    const thinOne = judge(view({ history: traffic({ GetTokenDevice: [10_000, 10_000], GetStudentSchool: [100, 90] }) }));
    expect(thinOne.go).toBe(false);
    expect(thinOne.blockers).toEqual(['GetStudentSchool: 90.0% compared (90 of 100), under 99%.']);
    const thinAll = judge(view({ history: traffic({ GetTokenDevice: [1000, 980] }) }));
    expect(thinAll.blockers).toEqual([
      'Coverage 98.0% (980 of 1000 answered requests compared) is under 99%: see Dropped and "without a legacy answer" below.',
      'GetTokenDevice: 98.0% compared (980 of 1000), under 99%.',
    ]);
    // 999 of 1000 is 99.9%, never shown as 100% while one is missing.
    expect(judge(view({ history: traffic({ GetTokenDevice: [1000, 999] }) })).go).toBe(true);
    expect(judge(view({ history: new History() })).blockers).toEqual([
      'No copied request answered since this process started: the coverage (compared / answered) is not measured yet.',
    ]);
  });

  test('each blocker named: real differences, not ready, no gateway, a queue that does not drain, shadowing off', () => {
    const blocked = judge(
      view({
        ready: { ready: false, reason: 'store: gone' },
        sms: {
          notSending: 'SMS: codes are queued, not sent',
          counts: null,
          oldestPending: new Date(T0 + 3 * 86_400_000 - 5 * MIN).toISOString(),
          failures: [],
          storeError: null,
        },
        shadow: { totals: { since: new Date(T0).toISOString(), compared: 50, real: 2, noise: 7 }, latest: [] },
        history: traffic({ GetTokenDevice: [60, 50] }),
      }),
    );
    expect(blocked.go).toBe(false);
    expect(blocked.line).toBe('50 requests compared over 3 days, 2 real differences (and 7 noise).');
    expect(blocked.blockers).toEqual([
      'Not ready: store: gone.',
      '2 real differences with the legacy host: see Shadowing below.',
      'Coverage 83.3% (50 of 60 answered requests compared) is under 99%: see Dropped and "without a legacy answer" below.',
      'GetTokenDevice: 83.3% compared (50 of 60), under 99%.',
      'SMS: codes are queued, not sent.',
      'A code has waited 5 minutes to be sent: sending is behind.',
    ]);
    expect(judge(view({ shadow: null })).blockers).toEqual([
      "Shadowing is off (SHADOW_URL unset): nothing shows the answers are the legacy host's.",
    ]);
  });
});

describe('the page', () => {
  const hostile = '<script>alert(1)</script>';
  const line: DifferenceLine = {
    time: new Date(T0).toISOString(),
    requestId: 'r1',
    mode: 'service-first',
    endpoint: 'PushNotificationMobile',
    operation: `Get${hostile}`,
    binding: 'soap11',
    request: { method: 'GET', url: `/X.asmx?q=${hostile}`, headers: {}, body: '' },
    legacy: { status: 200, headers: { 'content-type': 'text/xml' }, body: `<a>legacy ${hostile}</a>` },
    ours: { status: 200, headers: { 'content-type': 'text/xml' }, body: '<a>ours "quoted" &amp;</a>' },
    differences: [{ kind: 'body text of /a', detail: hostile }],
  };

  test('escapes every value from a request, an answer or the store; masks phones; shows no secret of the configuration', () => {
    const html = renderPage(
      view({
        shadow: { totals: { since: null, compared: 1, real: 1, noise: 0 }, latest: [line] },
        sms: {
          notSending: undefined,
          counts: { pending: 1, delivered: 0, failed: 1, expired: 0 },
          oldestPending: null,
          failures: [
            {
              id: 7,
              phone: '+9647701234567',
              status: 'failed',
              attempts: 5,
              createdAt: '',
              nextAttemptAt: null,
              deliveredAt: null,
              failedAt: '2026-01-01T00:00:00Z',
              lastError: `HTTP 400: bad number 9647701234567 ${hostile}`,
              hasCode: false,
            },
          ],
          storeError: null,
        },
      }),
    );
    expect(html).not.toContain('<script');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('&lt;a&gt;ours &quot;quoted&quot; &amp;amp;&lt;/a&gt;');
    expect(html).not.toContain('9647701234567');
    expect(html).toContain('+96477****567');
    expect(html).not.toContain('secret');
    expect(html).toContain('http://legacy-host/');
  });

  test('copies dropped are shown by reason (sampled, queue, bytes, answers over the cap), with the bytes held now', () => {
    const sample = (labels: Record<string, string>, value: number) => ({
      name: 'asmx_shadow_exchanges_total',
      labels: { operation: 'GetTokenDevice', binding: 'httppost', ...labels },
      value,
    });
    const samples = [
      sample({ outcome: 'match' }, 10),
      sample({ outcome: 'dropped', reason: 'sampled' }, 40),
      sample({ outcome: 'dropped', reason: 'queue' }, 2),
      sample({ outcome: 'dropped', reason: 'bytes' }, 1118),
      sample({ outcome: 'dropped', reason: 'answer_bytes' }, 3),
      { name: 'asmx_shadow_held_bytes', labels: {}, value: 6 * 1048576 },
    ];
    const html = renderPage(view({ samples }, { SHADOW_QUEUE_BYTES: String(8 * 1048576) }));
    expect(html).toMatch(
      /<span id="shadow-dropped">1,163 dropped \(40 sampled while the copier was behind, 2 SHADOW_QUEUE full, 1,118 over SHADOW_QUEUE_BYTES, 3 answer over the cap, not compared\)<\/span>; copies held now: 6\.0 MiB \(at most 8\.0 MiB a process\)/,
    );
    expect(renderPage(view())).toMatch(/<span id="shadow-dropped">0 dropped<\/span>/);
  });
});

describe('on the admin listener', () => {
  let server: http.Server;
  let base = '';
  const store = openSqliteStore(path.join(tmp, 'admin.db'));
  const metricsText = [requests(1), 'asmx_sms_requests_accepted_total 0'].join('\n');
  const cutover = createConsole({
    config: loadConfig({ SQLITE_PATH: path.join(tmp, 'admin.db') }),
    metrics: async () => parseMetrics(metricsText),
    readiness: async () => ({ ready: true }),
    store,
  });
  beforeAll(async () => {
    server = createAdminServer({
      metrics: async () => ({ contentType: 'text/plain', body: metricsText }),
      readiness: async () => ({ ready: true }),
      console: cutover,
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    cutover.close();
    await new Promise((resolve) => server.close(resolve));
    await store.close();
  });

  test('/console with its CSP (no script, nothing inline), its style sheet, / leading to it', async () => {
    const page = await fetch(`${base}/console`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(
      "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    const html = await page.text();
    expect(html).toContain('<link rel="stylesheet" href="/console.css">');
    expect(html).not.toMatch(/<script|style="|\son[a-z]+=/i);
    expect(html).toContain('Shadowing is off');
    expect((await fetch(`${base}/console.css`)).headers.get('content-type')).toBe('text/css; charset=utf-8');
    const root = await fetch(`${base}/`, { redirect: 'manual' });
    expect([root.status, root.headers.get('location')]).toEqual([302, '/console']);
    expect((await fetch(`${base}/console`, { method: 'HEAD' })).status).toBe(200);
    expect((await fetch(`${base}/console/x`)).status).toBe(404);
  });
});

describe('with workers', () => {
  test('the cluster primary serves the console, and its numbers are the whole service, summed over the workers', async () => {
    const s = await startService({ env: { WORKERS: '2' } });
    try {
      // A connection each: the primary hands them to the workers in turn.
      for (let i = 0; i < 6; i++) expect((await request(s.port, TOKEN_PATH)).status).toBe(200);
      const page = await request(s.adminPort, '/console');
      expect(page.status).toBe(200);
      expect(page.body).toContain('2 workers (summed)');
      expect(page.body).toMatch(/<tr><td>GetTokenDevice<\/td><td class="text">httpget<\/td><td>6<\/td>/);
      expect(page.body).toContain('6 requests answered since this process started.');
    } finally {
      s.kill();
      await s.exited;
      fs.rmSync(s.dir, { recursive: true, force: true });
    }
  });
});
