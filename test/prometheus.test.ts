import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createTestApp, FIXTURES, type TestApp } from './helpers/app';
import {
  JOB,
  poll,
  PROMETHEUS,
  type Prometheus,
  promtool,
  PROMTOOL,
  type QueryAnswer,
  type Sample,
  startPrometheus,
} from './helpers/prometheus';
import { metricsOf } from './helpers/promql';
import { PROJECT_ROOT, request, type Service, startService } from './helpers/service';
import { FakeGateway, until } from './helpers/sms-gateway';

/**
 * The alert rules (deploy/prometheus) and the Grafana dashboard (deploy/grafana) on Debian's
 * Prometheus: promtool checks the rules, the example configuration and the rules' unit tests; then
 * a real `prometheus`, run from the example configuration, scrapes the built service after traffic
 * that makes every panel's state happen (a real difference and noise while shadowing to two legacy
 * stand-ins, codes sent, failed and limited through a local SMS provider, a 500), and every query
 * of the dashboard must be valid PromQL that returns data, also without its `or vector(0)`
 * fallback; the alert rules load with health ok, read only metrics the service exports, and the
 * difference made fires the shadowing alert. jest.config.js says before the run when this is
 * skipped (no prometheus or promtool); REQUIRE_PROMETHEUS=1 (CI) makes that a failure. SQLite only
 * (not in jest.config.js's PostgreSQL half): the store behind the metrics is the behaviour suites'.
 */
const describePrometheus = PROMETHEUS !== undefined || process.env.REQUIRE_PROMETHEUS === '1' ? describe : describe.skip;
jest.setTimeout(120_000);

const ALERTS = fs.readFileSync(path.join(PROJECT_ROOT, 'deploy', 'prometheus', 'alerts.yml'), 'utf8');
const ALERT_NAMES = [...ALERTS.matchAll(/^\s*- alert: (\S+)$/gm)].map((m) => m[1]).sort();

interface Target {
  refId: string;
  expr: string;
}
interface Dashboard {
  time: { from: string };
  panels: Array<{ title: string; targets?: Target[] }>;
  templating: { list: Array<{ name: string; query: unknown; allValue?: string }> };
}
const dashboard = JSON.parse(
  fs.readFileSync(path.join(PROJECT_ROOT, 'deploy', 'grafana', 'student-info-service.json'), 'utf8'),
) as Dashboard;
const targets = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ title: p.title, ...t })));

/**
 * Grafana's variables as it would fill them in for this dashboard: the range its default time range
 * spans (now-24h, as Grafana writes it: in seconds), and $__rate_interval as the test sets it.
 * The instance, both ways: All (the variable's allValue) and one picked, regex-escaped as Grafana
 * escapes a multi-value variable's value inside =~"...".
 */
const SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 };
const [, count, unit] = /^now-(\d+)([smhdw])$/.exec(dashboard.time.from)!;
const RANGE = `${Number(count) * SECONDS[unit!]!}s`;
function concrete(expr: string, instance: string, rateInterval: string): string {
  const out = expr
    .replaceAll('$__rate_interval', rateInterval)
    .replaceAll('$__interval', '15s')
    .replaceAll('$__range', RANGE)
    .replaceAll('$instance', instance);
  if (out.includes('$')) throw new Error(`a variable this test does not fill in: ${out}`);
  return out;
}
const grafanaEscape = (value: string) => value.replace(/[\\$^*{}[\]'+?.()|]/g, '\\\\$&');

/** A legacy stand-in: this service over the fixture data with device tokens changed. */
async function legacyStandIn(tokens: Record<string, string>): Promise<{ base: string; close(): Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prometheus-legacy-'));
  let devices = fs.readFileSync(path.join(FIXTURES, 'data', 'devices.csv'), 'utf8');
  for (const [from, to] of Object.entries(tokens)) devices = devices.replace(from, to);
  fs.writeFileSync(path.join(dir, 'devices.csv'), devices);
  fs.copyFileSync(path.join(FIXTURES, 'data', 'students.csv'), path.join(dir, 'students.csv'));
  const t: TestApp = await createTestApp({ LOG_LEVEL: 'silent' }, dir);
  const server = http.createServer(t.listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      await new Promise((resolve) => server.close(resolve));
      await t.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

describePrometheus('the alert rules, by promtool', () => {
  test.each([
    ['check config', 'prometheus.yml'],
    ['check rules', 'alerts.yml'],
    ['test rules', 'alerts.test.yml'],
  ])('promtool %s %s', (command, file) => {
    expect(PROMTOOL).toBeDefined();
    const { status, output } = promtool(...command.split(' '), file);
    expect([status, output]).toEqual([0, expect.stringContaining('SUCCESS')]);
    expect(output).not.toMatch(/FAILED|WARNING/);
  });
});

describePrometheus('the dashboard and the alert rules on a real Prometheus scraping the service', () => {
  const gateway = new FakeGateway();
  let legacy: Awaited<ReturnType<typeof legacyStandIn>>;
  let secondary: Awaited<ReturnType<typeof legacyStandIn>>;
  let service: Service;
  let prometheus: Prometheus;
  let instance: string;
  /** When every query is asked (seconds): after a scrape that followed all the traffic. */
  let at: number;
  /** $__rate_interval: a window reaching back to a scrape before the last traffic. */
  let rateInterval: string;
  /** The verdict row's numbers as the service itself counted them. */
  let expected: Record<string, number>;
  const metricsText = async () => (await request(service.adminPort, '/metrics')).body;
  /** The sum of a metric's samples in /metrics whose labels match `labels` (a regular expression). */
  const serviceCounts = async () => {
    const text = await metricsText();
    const sum = (name: string, labels = /.*/) =>
      [...text.matchAll(new RegExp(`^${name}(?:\\{(.*)\\})? (\\S+)$`, 'gm'))]
        .filter((m) => labels.test(m[1] ?? ''))
        .reduce((n, m) => n + Number(m[2]), 0);
    return {
      'Requests compared': sum('asmx_shadow_exchanges_total', /outcome="(match|difference|noise)"/),
      'Real differences': sum('asmx_shadow_exchanges_total', /outcome="difference"/),
      Noise: sum('asmx_shadow_exchanges_total', /outcome="noise"/),
      'Codes failed or expired': sum('asmx_sms_failed_total') + sum('asmx_sms_expired_total'),
      'Codes pending': sum('asmx_sms_outbox_messages', /status="pending"/),
      'Sending codes': sum('asmx_sms_sending'),
    };
  };

  beforeAll(async () => {
    expect(PROMETHEUS).toBeDefined();
    // dev-1001: both legacy sites differ from this service and from each other the same way (noise);
    // dev-1002: they agree with each other, not with this service (a real difference).
    legacy = await legacyStandIn({ 'fcm:APA91bH-token-1001': 'fcm:legacy-1001', 'fcm:APA91bH-token-1002': 'fcm:legacy-1002' });
    secondary = await legacyStandIn({ 'fcm:APA91bH-token-1001': 'fcm:other-1001', 'fcm:APA91bH-token-1002': 'fcm:legacy-1002' });
    gateway.script.push(400); // the first code is refused for good: failed
    const gatewayUrl = await gateway.listen();
    service = await startService({
      env: {
        SHADOW_URL: `${legacy.base}/`,
        SHADOW_URL_SECONDARY: `${secondary.base}/`,
        SMS_GATEWAY: 'http',
        SMS_HTTP_URL: `${gatewayUrl}/send`,
        SMS_DEFAULT_REGION: 'IQ',
        SMS_LIMIT_PER_PHONE: '1',
      },
    });

    const get = async (url: string, status = 200) => expect([url, (await request(service.port, url)).status]).toEqual([url, status]);
    await get('/PushNotificationMobile.asmx/GetTokenDevice?id=dev-1001');
    await get('/PushNotificationMobile.asmx/GetTokenDevice?id=dev-1002');
    await get('/NotificationNotes.asmx/GetStudentSchool?school_base_url=http%3A%2F%2Falnoor.school.example&show_active=1');
    await get('/AboutUs.asmx/GetAboutUs');
    await get('/NotificationNotes.asmx/GetStudentSchool?school_base_url=x&show_active=12', 500); // the char rule's fault
    const authCode = async (body: string) => {
      const r = await request(service.port, '/AuthCodeSending.asmx/AuthCode', {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body,
      });
      expect(r.status).toBe(200);
    };
    await authCode('code=4821&phone=%2B9647701234567'); // refused by the provider: failed
    await until('the provider is asked for the first code', () => gateway.requests.length === 1);
    await authCode('code=4822&phone=%2B9647701234568'); // sent
    await authCode('code=4823&phone=%2B9647701234568'); // the per-phone limit
    await until('the provider has the code', () => gateway.delivered === 1);
    // The five copies (AuthCode is not copied) are compared after the clients' answers, and counted
    // after that: all of them before the first scrape, so that no count changes while Prometheus looks.
    await poll('the service has counted every copy and the failed code', async () => {
      const n = await serviceCounts();
      return n['Requests compared'] === 5 && n['Real differences'] === 1 && n.Noise === 1 && n['Codes failed or expired'] === 1;
    });

    instance = `127.0.0.1:${service.adminPort}`;
    prometheus = await startPrometheus(service.adminPort);
    // A scrape, then more traffic (an AuthCode: copied to no legacy site, so the verdict's counts stay
    // as they are), then a scrape after it: the rates over a window holding both are not 0.
    const lastScrape = async () => {
      const [sample] = ((await prometheus.query(`timestamp(up{job="${JOB}"})`)).data?.result ?? []) as Sample[];
      return sample === undefined ? null : { scraped: Number(sample.value[1]), now: sample.value[0] };
    };
    let before = 0;
    await poll('Prometheus has scraped the service', async () => ((before = (await lastScrape())?.scraped ?? 0), before > 0));
    await authCode('code=4824&phone=%2B9647701234569');
    await until('the provider has the second code', () => gateway.delivered === 2);
    await poll('the service has counted it sent', async () => /^asmx_sms_sent_total 2$/m.test(await metricsText()));
    const settled = Date.now() / 1000;
    await poll('Prometheus has scraped the service since', async () => {
      const last = await lastScrape();
      if (last === null || last.scraped <= settled) return false;
      at = last.now;
      return true;
    });
    // Grafana's value for a 15 s scrape (four scrapes), or more if the window must reach back further.
    rateInterval = `${Math.max(60, Math.ceil(at - before) + 5)}s`;
    expected = await serviceCounts();
  });

  afterAll(async () => {
    await prometheus?.stop();
    service?.kill();
    await service?.exited;
    await gateway.close();
    await legacy?.close();
    await secondary?.close();
    if (service !== undefined) fs.rmSync(service.dir, { recursive: true, force: true });
  });

  test('the target is up, and the instance variable lists it', async () => {
    expect((((await prometheus.query(`up{job="${JOB}"}`, at)).data?.result ?? []) as Sample[]).map((s) => s.value[1])).toEqual(['1']);
    const variable = dashboard.templating.list.find((v) => v.name === 'instance')!;
    const [, metric, label] = /^label_values\((\w+), (\w+)\)$/.exec((variable.query as { query: string }).query)!;
    const values = await prometheus.api<{ data: string[] }>(`/api/v1/label/${label}/values?${new URLSearchParams({ 'match[]': metric! })}`);
    expect(values.data).toEqual([instance]);
  });

  test('every query of the dashboard is valid and returns data, for All and for one instance, and without its `or vector(0)`', async () => {
    const allValue = dashboard.templating.list.find((v) => v.name === 'instance')!.allValue!;
    const problems: string[] = [];
    let asked = 0;
    for (const t of targets) {
      const variants = [t.expr, ...(t.expr.includes('or vector(0)') ? [t.expr.replace(/\s+or\s+vector\(0\)/g, '')] : [])];
      for (const expr of variants)
        for (const value of [allValue, grafanaEscape(instance)]) {
          const query = concrete(expr, value, rateInterval);
          const answer: QueryAnswer = await prometheus.query(query, at);
          asked += 1;
          const result = answer.data?.result;
          if (answer.status !== 'success') problems.push(`${t.title} ${t.refId}: ${answer.error} in ${query}`);
          else if (answer.data!.resultType !== 'scalar' && (result as unknown[]).length === 0)
            problems.push(`${t.title} ${t.refId}: no data for ${query}`);
          else if (JSON.stringify(result).includes('NaN'))
            problems.push(`${t.title} ${t.refId}: NaN from ${query}: ${JSON.stringify(result)}`);
        }
    }
    expect(problems).toEqual([]);
    expect(asked).toBeGreaterThan(2 * targets.length);
  });

  test("the verdict row reads what the service counted: each difference, noise and lost code, even those counted before a series' first scrape", async () => {
    const read: Record<string, number> = {};
    for (const title of Object.keys(expected)) {
      const [target] = targets.filter((t) => t.title === title);
      const [sample] = (await prometheus.query(concrete(target!.expr, '.*', rateInterval), at)).data!.result as Sample[];
      read[title] = Number(sample!.value[1]);
    }
    expect(read).toEqual(expected);
    expect(expected).toEqual({
      'Requests compared': 5,
      'Real differences': 1,
      Noise: 1,
      'Codes failed or expired': 1,
      'Codes pending': 0,
      'Sending codes': 1,
    });
  });

  test('the alert rules load with health ok, read only metrics the service exports, and the difference fires its alert', async () => {
    interface Rule {
      name: string;
      query: string;
      health: string;
      lastError?: string;
    }
    const rules = async () =>
      (await prometheus.api<{ data: { groups: Array<{ rules: Rule[] }> } }>('/api/v1/rules')).data.groups.flatMap((g) => g.rules);
    await poll('every rule has been evaluated', async () => (await rules()).every((r) => r.health !== 'unknown'));
    const loaded = await rules();
    expect(loaded.map((r) => r.name).sort()).toEqual(ALERT_NAMES);
    expect(ALERT_NAMES.length).toBeGreaterThanOrEqual(8);
    expect(loaded.filter((r) => r.health !== 'ok').map((r) => `${r.name}: ${r.lastError}`)).toEqual([]);

    const read = [...new Set(loaded.flatMap((r) => metricsOf(r.query)))].sort();
    const present = await prometheus.query(`count by (__name__) ({__name__=~"${read.join('|')}"})`, at);
    expect(((present.data?.result ?? []) as Sample[]).map((s) => s.metric.__name__).sort()).toEqual(read);
    expect(read).toEqual(
      expect.arrayContaining([
        'up',
        'asmx_ready',
        'asmx_sms_failed_total',
        'asmx_sms_oldest_pending_seconds',
        'asmx_shadow_exchanges_total',
      ]),
    );

    // The difference was counted before the first scrape (its series new, at 1): the alert's second clause.
    interface Alert {
      labels: Record<string, string>;
      annotations: Record<string, string>;
      state: string;
    }
    const alerts = async () => (await prometheus.api<{ data: { alerts: Alert[] } }>('/api/v1/alerts')).data.alerts;
    await poll('the difference fires StudentInfoShadowDifferences', async () =>
      (await alerts()).some((a) => a.labels.alertname === 'StudentInfoShadowDifferences' && a.state === 'firing'),
    );
    const fired = (await alerts()).find((a) => a.labels.alertname === 'StudentInfoShadowDifferences')!;
    expect(fired.labels).toMatchObject({ instance, job: JOB, severity: 'warning' });
    expect(fired.annotations.description).toMatch(/^1 real differences in the last 15 minutes/);
    const names = (await alerts()).map((a) => a.labels.alertname);
    expect(names).not.toContain('StudentInfoServiceDown');
    expect(names).not.toContain('StudentInfoServiceNotReady');
  });
});
