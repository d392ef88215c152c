import { Dispatcher } from '../src/sms';
import { messageKey } from '../src/sms/dispatcher';
import { createGateway } from '../src/sms/gateways';
import { smsMetrics } from '../src/sms/metrics';
import type { ClaimedSms, SmsOutbox } from '../src/store/store';
import { captureLog, settle, until } from './helpers/sms-gateway';
import { authCode, byStatus, PATIENT_PROVIDER, phone, rows, smsServices } from './helpers/sms-service';

/**
 * Delivery's promises with faults injected: a dispatcher stopped mid-claim, a save or an outcome
 * that cannot be recorded, a provider whose answer is lost. Each code is sent, and sent twice only
 * when the provider's answer to the first send was lost.
 */

const world = smsServices();

/** The outbox with its claims held until `open()`: a stop can land while a claim is under way. */
function gatedClaims(outbox: SmsOutbox): { outbox: SmsOutbox; claiming: Promise<void>; open(): void } {
  let open!: () => void;
  let claimed!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const claiming = new Promise<void>((r) => (claimed = r));
  const gated = Object.create(outbox) as SmsOutbox;
  gated.claimDue = async (...args): Promise<ClaimedSms[]> => {
    const result = await outbox.claimDue(...args);
    claimed();
    await gate;
    return result;
  };
  return { outbox: gated, claiming, open };
}

test('stop() during a claim releases what it claimed: nothing sent, no attempt counted; stop() is idempotent', async () => {
  // A lease far longer than the test: only a release lets another dispatcher send these soon.
  // The provider's answers taken however late (PATIENT_PROVIDER): a loaded machine's late answer
  // would otherwise be taken for lost and the code sent again, which the design allows.
  const s = await world.service({ ...PATIENT_PROVIDER, SMS_LEASE_MS: '60000' }, false);
  for (let i = 0; i < 3; i += 1) await s.store.outbox.enqueue(String(1000 + i), phone(i));
  const gated = gatedClaims(s.store.outbox);
  const d = new Dispatcher(gated.outbox, createGateway(s.config.sms), { ...s.config.sms, sendTimeoutMs: 300 });
  d.start();
  await gated.claiming;
  // Claimed and leased by this dispatcher, not yet sent.
  expect((await rows(s)).map((r) => r.attempts)).toEqual([1, 1, 1]);
  const first = d.stop();
  const second = d.stop();
  expect(second).toBe(first);
  gated.open();
  await first;
  await settle(200);
  expect(world.gateway.requests).toEqual([]);
  expect((await rows(s)).map((r) => [r.status, r.attempts])).toEqual([
    ['pending', 0],
    ['pending', 0],
    ['pending', 0],
  ]);
  // Released at once, not when the lease ends: another dispatcher sends them now.
  d.start(); // stopped for good: starts nothing
  s.sms.dispatcher.start();
  await until('the three are delivered', async () => (await byStatus(s, 'delivered')) === 3, 10_000);
  expect(world.gateway.requests).toHaveLength(3);
});

const resent = async () => (await smsMetrics.resent.get()).values[0]?.value ?? 0;

test("a save that throws: AuthCode faults and uses up nothing, so the app's retry of the same code is queued and sent once", async () => {
  // One code an hour for this phone: a save that failed must not have spent it.
  const s = await world.service({
    ...PATIENT_PROVIDER,
    SMS_LIMIT_PER_PHONE: '1',
    SMS_LIMIT_PER_ADDRESS: '1',
    SMS_LIMIT_GLOBAL_PER_MINUTE: '1',
  });
  jest.spyOn(s.store.outbox, 'enqueue').mockRejectedValueOnce(new Error('disk I/O error'));
  const failed = await authCode(s.app, '6060', phone(1));
  expect(failed.status).toBe(500);
  expect(await rows(s)).toEqual([]);
  // The app retries the same request: not a duplicate, within every limit.
  expect((await authCode(s.app, '6060', phone(1))).status).toBe(200);
  await until('the retry is delivered', async () => (await byStatus(s, 'delivered')) === 1);
  await settle(200);
  expect(world.gateway.requests.map((r) => (JSON.parse(r.body) as { to: string }).to)).toEqual([phone(1)]);
  // A third request is over the limits: they were spent once, by the request that was queued.
  await authCode(s.app, '7070', phone(1));
  await settle(200);
  expect(await rows(s)).toHaveLength(1);
});

test('the provider accepts but its answer is lost: sent again once, with the same idempotency key, counted and logged', async () => {
  const captured = captureLog();
  const before = await resent();
  try {
    const s = await world.service();
    world.gateway.honourIdempotency = true;
    world.gateway.script.push('drop');
    await authCode(s.app, '8080', phone(1));
    await until('the message is delivered', async () => (await byStatus(s, 'delivered')) === 1);
    await settle(200);
    const [row] = await rows(s);
    expect(row).toMatchObject({ status: 'delivered', attempts: 2 });
  } finally {
    captured.restore();
  }
  const keys = world.gateway.requests.map((r) => r.headers['idempotency-key']);
  expect(keys).toHaveLength(2);
  expect(keys[0]).toMatch(/^sms-[\w-]{24}$/);
  expect(keys[1]).toBe(keys[0]);
  // A provider that honours the key sends the message once.
  expect(world.gateway.delivered).toBe(1);
  expect((await resent()) - before).toBe(1);
  expect(captured.lines.filter((l) => l.msg.startsWith('SMS sent again'))).toEqual([
    {
      level: 'warn',
      msg: "SMS sent again: the provider's answer to an earlier attempt was lost",
      fields: expect.objectContaining({ phone: '+96477****001', attempt: 2 }),
    },
  ]);
});

test('a send the provider refused (HTTP 503) is tried again without counting a resend; one it never answered counts', async () => {
  const s = await world.service();
  const before = await resent();
  world.gateway.script.push(503);
  await authCode(s.app, '1111', phone(1));
  await until('the first is delivered', async () => (await byStatus(s, 'delivered')) === 1);
  expect((await resent()) - before).toBe(0);
  world.gateway.script.push('hang');
  await authCode(s.app, '2222', phone(2));
  await until('the second is delivered', async () => (await byStatus(s, 'delivered')) === 2);
  expect((await resent()) - before).toBe(1);
  expect(world.gateway.requests).toHaveLength(4);
});

test('the outcome failing to be recorded after the provider accepted is recorded again, not sent again', async () => {
  const s = await world.service({}, false);
  const fail = jest.spyOn(s.store.outbox, 'markDelivered');
  fail.mockRejectedValueOnce(new Error('connection lost')).mockRejectedValueOnce(new Error('connection lost'));
  const before = await resent();
  s.sms.start();
  await authCode(s.app, '3333', phone(1));
  await until('the message is delivered', async () => (await byStatus(s, 'delivered')) === 1, 10_000);
  // Longer than the lease (2 s): a row left to its lease would have been claimed and sent again.
  await settle(2500);
  expect(fail).toHaveBeenCalledTimes(3);
  expect(world.gateway.requests).toHaveLength(1);
  expect((await resent()) - before).toBe(0);
  expect((await rows(s))[0]).toMatchObject({ status: 'delivered', attempts: 1 });
});

test("each message's key is the same in every process and differs between messages", () => {
  const a = { id: 7, createdAt: '2025-01-01T00:00:00.000Z' };
  expect(messageKey(a)).toBe(messageKey({ ...a }));
  expect(messageKey(a)).not.toBe(messageKey({ ...a, id: 8 }));
  expect(messageKey(a)).not.toBe(messageKey({ ...a, createdAt: '2025-01-01T00:00:00.001Z' }));
});

/**
 * The outbox of a dispatcher that reads its recorded send start only after its lease has run out (a
 * lock waited for, a stalled process): `meanwhile` runs then, before the start is handed back.
 */
function lateStart(outbox: SmsOutbox, meanwhile: () => Promise<void>): SmsOutbox {
  let leaseUntil = Infinity;
  const slow = Object.create(outbox) as SmsOutbox;
  slow.claimDue = async (...args): Promise<ClaimedSms[]> => {
    const claimed = await outbox.claimDue(...args);
    if (claimed.length > 0) leaseUntil = args[2].getTime();
    return claimed;
  };
  slow.markStarted = async (...args): Promise<number[]> => {
    const ids = await outbox.markStarted(...args);
    await until('the lease has run out', () => Date.now() > leaseUntil, 10_000);
    await meanwhile();
    return ids;
  };
  return slow;
}

// The slowed dispatcher's lease: 1.5 s, its sends' time-out 0.3 s: a send may start at once after its claim.
const slowOptions = (s: Awaited<ReturnType<typeof world.service>>) => ({ ...s.config.sms, leaseMs: 1500, sendTimeoutMs: 300 });

test('a dispatcher slowed past its lease after recording its send start does not send: the dispatcher that took the row over sends it once', async () => {
  const s = await world.service({}, false);
  const before = await resent();
  await s.store.outbox.enqueue('4545', phone(1));
  // The lease over, another dispatcher claims the row and sends it while the slow one is still away.
  const other = async () => {
    s.sms.dispatcher.start();
    await until('the other dispatcher delivers it', async () => (await byStatus(s, 'delivered')) === 1);
  };
  const slow = new Dispatcher(lateStart(s.store.outbox, other), createGateway(s.config.sms), slowOptions(s));
  slow.start();
  await until('the message is delivered', async () => (await byStatus(s, 'delivered')) === 1, 10_000);
  await slow.stop();
  await settle(200);
  expect(world.gateway.requests).toHaveLength(1);
  // The recorded start made the takeover a counted resend: a slow process cannot be told from a dead one.
  expect((await resent()) - before).toBe(1);
  expect((await rows(s))[0]).toMatchObject({ status: 'delivered', attempts: 2 });
});

test('a dispatcher slowed past its lease after recording its send start, the row not taken over yet, gives it back as it was', async () => {
  const s = await world.service({}, false);
  const before = await resent();
  await s.store.outbox.enqueue('5656', phone(1));
  const slow = new Dispatcher(
    lateStart(s.store.outbox, async () => undefined),
    createGateway(s.config.sms),
    slowOptions(s),
  );
  slow.start();
  await until('the slow dispatcher gives the row back', async () => (await rows(s))[0]!.attempts === 0, 10_000);
  await slow.stop();
  expect(world.gateway.requests).toEqual([]);
  // Its start undone: the next claim sends it as a first send, not as a resend.
  s.sms.dispatcher.start();
  await until('the message is delivered', async () => (await byStatus(s, 'delivered')) === 1);
  await settle(200);
  expect(world.gateway.requests).toHaveLength(1);
  expect((await resent()) - before).toBe(0);
  expect((await rows(s))[0]).toMatchObject({ status: 'delivered', attempts: 1 });
});
