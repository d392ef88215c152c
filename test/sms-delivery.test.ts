import { Dispatcher } from '../src/sms';
import { createGateway } from '../src/sms/gateways';
import type { ClaimedSms, SmsOutbox } from '../src/store/store';
import { settle, until } from './helpers/sms-gateway';
import { byStatus, phone, rows, smsServices } from './helpers/sms-service';

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
  const s = await world.service({ SMS_LEASE_MS: '60000' }, false);
  for (let i = 0; i < 3; i += 1) await s.store.enqueueAuthCode(String(1000 + i), phone(i));
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
