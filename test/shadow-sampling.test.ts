import http from 'node:http';
import type { AddressInfo } from 'node:net';
import client from 'prom-client';
import { createTestApp, type TestApp } from './helpers/app';
import { until } from './helpers/legacy-host';
import { request } from './helpers/service';

/**
 * Shadowing behind (issue 31): a legacy host slower than the traffic, SHADOW_CONCURRENCY=1 and
 * SHADOW_QUEUE=40. Once the copier reports that it is behind, the service compares one copy in N of
 * each operation and binding and counts the rest dropped for `sampled` (src/shadow/sampler.ts), so
 * that a burst of one operation no longer fills the queue and starves another; and every copyable
 * request answered is counted exactly once, whatever became of its copy.
 *
 * The legacy host is a second instance of the service (its answers match) that answers a copy only
 * when the test lets it: how far behind the copier is, is set by the test, not by the clock, so that
 * a loaded machine changes how long the run takes and nothing it asserts.
 */

const CONCURRENCY = 1;
const QUEUE = 40;
/** Copies in flight at most (mirror.ts): one at the legacy host, QUEUE waiting behind it. */
const BOUND = CONCURRENCY + QUEUE;
/**
 * Copies answered after the queue filled: the copier reports once BOUND / 8 (5) copies have settled,
 * if its 200 ms timer has not sent them sooner, so these ten make two reports or more; with no more
 * than a quarter of BOUND answered, each finds the queue at least three quarters full (31 / 41 at
 * the last) and doubles N: N >= 4 after them, whatever the machine's speed.
 */
const RELEASED = Math.floor(BOUND / 4);

const TOKEN_GET = '/PushNotificationMobile.asmx/GetTokenDevice?id=dev-1001';
const NS = 'http://tempuri.org/';
const SCHOOL_SOAP = `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><GetStudentSchool xmlns="${NS}"><school_base_url>http://alnoor.school.example</school_base_url><show_active>49</show_active></GetStudentSchool></soap:Body></soap:Envelope>`;
const TOKEN = 'GetTokenDevice httpget';
const SCHOOL = 'GetStudentSchool soap11';

const apps: TestApp[] = [];
const servers: http.Server[] = [];
afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  for (const t of apps) await t.close();
});

async function listen(handler: http.RequestListener): Promise<number> {
  const server = http.createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/**
 * The legacy stand-in: the service itself behind a gate. Each copy waits for a permit (`release`),
 * then the service answers it; `received` records each copy's operation in the order it came (the
 * copier sends them in the order they were offered, one at a time).
 */
async function gatedLegacyHost(): Promise<{ url: string; received: string[]; answered: () => number; release: (n: number) => void }> {
  const legacy = await createTestApp({ LOG_LEVEL: 'silent' });
  apps.push(legacy);
  const received: string[] = [];
  const held: Array<() => void> = [];
  let permits = 0;
  let answered = 0;
  const serve = (req: http.IncomingMessage, res: http.ServerResponse) => {
    res.once('finish', () => (answered += 1));
    legacy.listener(req, res);
  };
  const port = await listen((req, res) => {
    received.push(req.method === 'GET' ? TOKEN : SCHOOL);
    if (permits > 0) {
      permits -= 1;
      serve(req, res);
    } else held.push(() => serve(req, res));
  });
  const release = (n: number) => {
    permits += n;
    while (permits > 0 && held.length > 0) {
      permits -= 1;
      held.shift()!();
    }
  };
  return { url: `http://127.0.0.1:${port}/`, received, answered: () => answered, release };
}

/** The shadowing service's counters, by `operation binding outcome[ reason]`, and their sum. */
async function counted(): Promise<{ by: Record<string, number>; total: number }> {
  const metric = client.register.getSingleMetric('asmx_shadow_exchanges_total')!;
  const by: Record<string, number> = {};
  let total = 0;
  for (const v of (await metric.get()).values) {
    const { operation, binding, outcome, reason } = v.labels;
    const key = `${operation} ${binding} ${outcome}${reason === undefined ? '' : ` ${reason}`}`;
    by[key] = (by[key] ?? 0) + v.value;
    total += v.value;
  }
  return { by, total };
}
const n = (by: Record<string, number>, key: string) => by[key] ?? 0;

test('behind, one copy in N of each operation is compared, the rest dropped for `sampled`; a burst of one no longer starves the other; every request counted once', async () => {
  const legacy = await gatedLegacyHost();
  const ours = await createTestApp({
    LOG_LEVEL: 'silent',
    SHADOW_URL: legacy.url,
    SHADOW_LOG: '',
    SHADOW_CONCURRENCY: String(CONCURRENCY),
    SHADOW_QUEUE: String(QUEUE),
    SHADOW_TIMEOUT_MS: '600000',
  });
  apps.push(ours);
  const port = await listen(ours.listener);
  const sent: Record<string, number> = { [TOKEN]: 0, [SCHOOL]: 0 };
  /** `count` requests of one kind, `parallel` at a time, each answered in full (and so offered for copying). */
  const send = async (kind: string, count: number, parallel: number) => {
    for (let i = 0; i < count; i += parallel) {
      const replies = await Promise.all(
        Array.from({ length: Math.min(parallel, count - i) }, () =>
          kind === TOKEN
            ? request(port, TOKEN_GET)
            : request(port, '/NotificationNotes.asmx', {
                method: 'POST',
                headers: { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: `"${NS}GetStudentSchool"` },
                body: SCHOOL_SOAP,
              }),
        ),
      );
      for (const r of replies)
        expect([r.status, r.body.includes(kind === TOKEN ? 'fcm:APA91bH-token-1001' : 'Ali Hassan')]).toEqual([200, true]);
      sent[kind] += replies.length;
    }
  };

  // 1. A burst of one operation fills the queue: one copy at the legacy host, QUEUE behind it, one
  // more dropped (queue). Nothing is answered yet, so the copier has reported nothing: every copy offered.
  await send(TOKEN, BOUND + 1, 8);
  await until(async () => n((await counted()).by, `${TOKEN} dropped queue`) === 1);
  await until(() => legacy.received.length === 1);

  // 2. The legacy host answers a few; the copier's reports find it behind (the queue three quarters full).
  // N halves for each 250 ms without such a report: time stands still in this process until step 3
  // has been offered, so that how long the machine takes over it changes nothing.
  const frozen = jest.spyOn(Date, 'now').mockReturnValue(Date.now());
  legacy.release(RELEASED);
  await until(async () => n((await counted()).by, `${TOKEN} match`) === RELEASED);

  // 3. Another burst of the same operation, then a few of the other. Each operation and binding has
  // its own one in N, so the other's first copy is compared and finds room in the queue. (Nothing
  // settles meanwhile: N holds.) The burst is odd: with one count shared by all operations, the
  // other's copies would come at turns 17 to 19, none of them a multiple of any N >= 4, all left out.
  const [burst, other] = [17, 3];
  await send(TOKEN, burst, 8);
  await send(SCHOOL, other, 3);
  frozen.mockRestore();

  // 4. The legacy host answers the rest; every copy settles.
  legacy.release(Number.MAX_SAFE_INTEGER);
  const requests = sent[TOKEN] + sent[SCHOOL];
  await until(async () => (await counted()).total >= requests);
  await until(() => legacy.answered() === legacy.received.length);
  // Closed: the copies still in flight would be counted now (reason `stop`), and no report counts after.
  await ours.close();
  apps.splice(apps.indexOf(ours), 1);
  const { by, total } = await counted();

  // Exactly once: compared, or dropped for a reason; none dropped at the stop, no legacy error.
  expect(total).toBe(requests);
  for (const kind of [TOKEN, SCHOOL]) {
    const forKind = Object.entries(by).filter(([k]) => k.startsWith(`${kind} `));
    expect(forKind.reduce((sum, [, v]) => sum + v, 0)).toBe(sent[kind]);
    expect(
      forKind.map(([k]) => k.slice(kind.length + 1)).filter((o) => !['match', 'dropped sampled', 'dropped queue'].includes(o)),
    ).toEqual([]);
    // What was compared is what reached the legacy host, and all of it matched.
    expect(n(by, `${kind} match`)).toBe(legacy.received.filter((r) => r === kind).length);
  }
  // Step 3 under N >= 4 (RELEASED): one in N of each operation compared, the first of each, the rest
  // dropped for `sampled`: of the burst between 1 and ceil(17 / 4), of the other exactly its first.
  const burstCompared = n(by, `${TOKEN} match`) - BOUND;
  const otherCompared = n(by, `${SCHOOL} match`);
  expect([n(by, `${TOKEN} dropped sampled`), n(by, `${SCHOOL} dropped sampled`)]).toEqual([burst - burstCompared, other - otherCompared]);
  expect(otherCompared).toBe(1);
  expect(burstCompared).toBeGreaterThanOrEqual(1);
  expect(burstCompared).toBeLessThanOrEqual(Math.ceil(burst / 4));
  // The queue overflowed once, in step 1; sampling kept it from overflowing again.
  expect(n(by, `${TOKEN} dropped queue`) + n(by, `${SCHOOL} dropped queue`)).toBe(1);
  // The other operation's copies went after the burst's, to the legacy host.
  expect(legacy.received.slice(BOUND, BOUND + burstCompared)).toEqual(Array(burstCompared).fill(TOKEN));
  expect(legacy.received.slice(BOUND + burstCompared)).toEqual(Array(otherCompared).fill(SCHOOL));
}, 30_000);
