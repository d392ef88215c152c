import { Dispatcher, Retention } from '../src/sms';
import { createGateway } from '../src/sms/gateways';
import { smsMetrics } from '../src/sms/metrics';
import type { ClaimedSms, SmsOutbox } from '../src/store/store';
import { captureLog, settle, until } from './helpers/sms-gateway';
import { authCode, backdate, byStatus, insertRow, phone, rows, smsServices } from './helpers/sms-service';

/**
 * Safe SMS defaults (issue 21, rule 5) and the outbox's retention (rule 7): codes expire, only the
 * configured countries are texted, global budgets per minute, hour and day, no gateway means nothing
 * sent or logged, and old rows are purged in bounded batches.
 */

const world = smsServices();
const metric = async (m: typeof smsMetrics.expired, labels: Record<string, string> = {}) =>
  (await m.get()).values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x))?.value ?? 0;

test('a code past SMS_CODE_TTL_SECONDS is not sent: expired, erased, counted', async () => {
  const s = await world.service({}, false);
  await authCode(s.app, '1212', phone(1));
  await authCode(s.app, '3434', phone(2));
  const old = (await rows(s)).find((r) => r.phone === phone(2))!;
  await backdate(world, s, old.id, 601);
  const before = await metric(smsMetrics.expired);
  s.sms.start();
  await until('the young one is delivered', async () => (await byStatus(s, 'delivered')) === 1);
  await until('the old one has expired', async () => (await byStatus(s, 'expired')) === 1);
  await settle(200);
  expect(world.gateway.requests.map((r) => (JSON.parse(r.body) as { to: string }).to)).toEqual([phone(1)]);
  expect((await rows(s)).find((r) => r.id === old.id)).toMatchObject({
    status: 'expired',
    hasCode: false,
    lastError: 'code expired after 600 s; not sent',
  });
  expect((await metric(smsMetrics.expired)) - before).toBe(1);
});

test('a code that expires between its claim and its send is not sent either', async () => {
  const s = await world.service({ SMS_CODE_TTL_SECONDS: '1' }, false);
  await authCode(s.app, '5656', phone(1));
  const [row] = await rows(s);
  // Claims held until the code is older than its lifetime.
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const outbox = Object.create(s.store.outbox) as SmsOutbox;
  outbox.claimDue = async (...args): Promise<ClaimedSms[]> => {
    const claimed = await s.store.outbox.claimDue(...args);
    if (claimed.length > 0) await gate;
    return claimed;
  };
  const d = new Dispatcher(outbox, createGateway(s.config.sms), { ...s.config.sms, sendTimeoutMs: 300 });
  d.start();
  await until('claimed', async () => (await rows(s))[0]!.attempts === 1);
  await until('older than its lifetime', () => Date.now() - Date.parse(row!.createdAt) > 1000);
  open();
  await until('expired', async () => (await byStatus(s, 'expired')) === 1);
  await d.stop();
  expect(world.gateway.requests).toEqual([]);
});

test('only the configured countries are texted: the default region alone allows its own', async () => {
  const s = await world.service(); // SMS_DEFAULT_REGION=IQ, no SMS_ALLOWED_COUNTRIES
  expect(s.config.sms.allowedCountries).toEqual(['IQ']);
  const before = await metric(smsMetrics.refused, { reason: 'country' });
  await authCode(s.app, '1111', '+962791234567'); // Jordan
  await authCode(s.app, '2222', '+447911123456'); // the UK
  await authCode(s.app, '3333', '07701234567'); // Iraq, written nationally
  await until('the Iraqi one is delivered', async () => (await byStatus(s, 'delivered')) === 1);
  await settle(200);
  expect(world.gateway.requests).toHaveLength(1);
  expect((await metric(smsMetrics.refused, { reason: 'country' })) - before).toBe(2);
});

test.each([
  ['SMS_LIMIT_GLOBAL_PER_HOUR', 'global_hour'],
  ['SMS_LIMIT_GLOBAL_PER_DAY', 'global_day'],
])('%s caps what is sent whatever the per-minute budget', async (setting, kind) => {
  const s = await world.service({ [setting]: '3', SMS_LIMIT_GLOBAL_PER_MINUTE: '1000', TRUST_PROXY: 'true' });
  const before = await metric(smsMetrics.limited, { kind });
  for (let i = 0; i < 5; i += 1) await authCode(s.app, '1234', phone(i), { 'X-Forwarded-For': `203.0.113.${i}` });
  await until('three are delivered', async () => (await byStatus(s, 'delivered')) === 3);
  await settle(200);
  expect(world.gateway.requests).toHaveLength(3);
  expect(await rows(s)).toHaveLength(3);
  expect((await metric(smsMetrics.limited, { kind })) - before).toBe(2);
});

test('no gateway (the default): codes are queued, nothing is sent or logged, and the metric says so', async () => {
  const captured = captureLog();
  try {
    const s = await world.service({ SMS_GATEWAY: 'none' });
    expect((await smsMetrics.sending.get()).values.find((v) => v.labels.gateway === 'none')?.value).toBe(0);
    expect((await authCode(s.app, '902134', phone(1))).status).toBe(200);
    await settle(300);
    expect(await rows(s)).toEqual([expect.objectContaining({ status: 'pending', attempts: 0, hasCode: true, phone: phone(1) })]);
  } finally {
    captured.restore();
  }
  expect(world.gateway.requests).toEqual([]);
  expect(captured.lines.map((l) => JSON.stringify(l)).join('\n')).not.toContain('902134');
});

test('retention: delivered, failed and expired rows past SMS_RETENTION_DAYS go in bounded batches; pending ones expire first', async () => {
  const s = await world.service({ SMS_RETENTION_DAYS: '30' }, false);
  const day = 86_400;
  for (const status of ['delivered', 'failed', 'expired'] as const)
    for (let i = 0; i < 3; i += 1) await insertRow(world, s, status, 31 * day);
  await insertRow(world, s, 'pending', 31 * day); // never sent: expires, then goes with the rest
  await insertRow(world, s, 'delivered', 29 * day); // within retention
  await insertRow(world, s, 'failed', 300, 2 * 3600); // failed two hours ago: its code is erased
  await insertRow(world, s, 'pending', 60); // still valid: kept, and sent later
  const purge = jest.spyOn(s.store.outbox, 'purge');
  const retention = new Retention(s.store.outbox, s.config.sms, 4);
  // Erased: the recent failure's code, and the old failures' codes just before their rows go.
  expect(await retention.runOnce()).toEqual({ expired: 1, erased: 4, purged: 10, windows: 0 });
  // The outbox's gauges, as it left them: one code pending, queued a minute ago (the backlog alert's age).
  expect(await metric(smsMetrics.outbox, { status: 'pending' })).toBe(1);
  const age = await metric(smsMetrics.oldestPending);
  expect([age >= 60, age < 600]).toEqual([true, true]);
  // Four at a time: 4, 4, 2.
  expect(purge.mock.calls.map(([, limit]) => limit)).toEqual([4, 4, 4]);
  expect((await rows(s)).map((r) => [r.status, r.hasCode]).sort()).toEqual([
    ['delivered', false],
    ['failed', false],
    ['pending', true],
  ]);
  expect(await retention.runOnce()).toEqual({ expired: 0, erased: 0, purged: 0, windows: 0 });
});
