import Database from 'better-sqlite3';
import { loadConfig } from '../src/config';
import { SmsIntake } from '../src/sms/intake';
import { type Limiter, MemoryLimiter } from '../src/sms/limits';
import { Retention } from '../src/sms/retention';
import { openStore } from '../src/store/open';
import type { Store } from '../src/store/store';
import { freePort, request, servicesPerTest } from './helpers/service';
import { type Service, smsServices } from './helpers/sms-service';

/**
 * The SMS limits hold whatever a caller does (issue 30, rule 1): the store decides every AuthCode in
 * the transaction that queues it, so no flood, restart, kill, second process or absent Redis resets
 * or exceeds a limit. On the configured store (SQLite here, PostgreSQL in jest's postgres project).
 * Requests are driven through the intake directly where their number matters, not over HTTP.
 */

const world = smsServices();
const startService = servicesPerTest();

/** Many distinct valid Iraqi mobiles (770 and seven digits) and addresses. */
const phone = (i: number) => `+964770${String(i).padStart(7, '0')}`;
const address = (i: number) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
const VICTIM = '+9647501234567';
const CALLER = '203.0.113.7';

/** Limits of the attack: five a phone, twenty an address, a day's budget of forty. */
const LIMITS = {
  SMS_GATEWAY: 'none',
  SMS_LIMIT_PER_PHONE: '5',
  SMS_LIMIT_PER_ADDRESS: '20',
  SMS_LIMIT_GLOBAL_PER_MINUTE: '1000',
  SMS_LIMIT_GLOBAL_PER_HOUR: '1000',
  SMS_LIMIT_GLOBAL_PER_DAY: '40',
};

const pending = async (s: Service | Store) => ('outbox' in s ? s : s.store).outbox.counts().then((c) => c.pending);

/** Rows of the limits' table, read with a connection of the test's own. */
async function windowRows(s: Service): Promise<number> {
  if (world.db !== null) return Number((await world.db.query<{ n: string }>('SELECT count(*) AS n FROM sms_limit_windows'))[0]!.n);
  const db = new Database(s.config.sqlitePath, { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM sms_limit_windows').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/** Requests `from`..`to`-1 of `make`, a thousand in flight at a time (the store's group commit takes them in batches). */
async function flood(
  intake: SmsIntake,
  from: number,
  to: number,
  make: (i: number) => [code: string, phone: string, address: string],
): Promise<void> {
  for (let i = from; i < to; i += 1000) {
    await Promise.all(Array.from({ length: Math.min(1000, to - i) }, (_, j) => intake.accept(...make(i + j))));
  }
}

/** The victim's phone, the caller's address and the day's budget, each used up: 5 + 20 + 15 = 40 queued. */
async function useUpEveryLimit(intake: SmsIntake): Promise<void> {
  for (let i = 0; i < 5; i += 1) await intake.accept(`v${i}`, VICTIM, address(900_000 + i));
  for (let i = 0; i < 20; i += 1) await intake.accept('1', phone(800_000 + i), CALLER);
  for (let i = 0; i < 15; i += 1) await intake.accept('1', phone(700_000 + i), address(700_000 + i));
}

/** One more request each: the victim's phone (a new code), the caller (a new phone), anyone (the budget). */
async function tryEachLimit(intake: SmsIntake, round: number): Promise<void> {
  await intake.accept(`x${round}`, VICTIM, address(600_000 + round));
  await intake.accept('1', phone(500_000 + round), CALLER);
  await intake.accept('1', phone(400_000 + round), address(400_000 + round));
}

/** Remembers nothing: every request is decided by the store. */
const forgetful: Limiter = { knownFull: async () => null, remember: async () => undefined, close: async () => undefined };

test('a flood of 120,000 distinct junk AuthCodes resets nothing: the phone, the address and the budget still refuse, and memory and storage stay bounded', async () => {
  const s = await world.service(LIMITS, false);
  await useUpEveryLimit(s.sms.intake);
  expect(await pending(s)).toBe(40);
  // Distinct codes, phones and addresses: every one a new key for a limiter that counted them.
  await flood(s.sms.intake, 0, 120_000, (i) => [String(i), phone(i), address(i)]);
  for (let round = 0; round < 3; round += 1) await tryEachLimit(s.sms.intake, round);
  expect(await pending(s)).toBe(40);
  // What is stored is bounded by what was queued: a window per key of a queued request, none for the flood.
  expect(await windowRows(s)).toBeLessThanOrEqual(3 * 40 + 3);
  expect((s.sms.limiter as MemoryLimiter).size).toBeLessThanOrEqual(10_000);

  // The same without any memory in the process: the store alone refuses them.
  const bare = new SmsIntake(s.config.sms, s.store, forgetful);
  await flood(bare, 200_000, 203_000, (i) => [String(i), i % 2 === 0 ? VICTIM : phone(i), i % 3 === 0 ? CALLER : address(i)]);
  for (let round = 3; round < 6; round += 1) await tryEachLimit(bare, round);
  expect(await pending(s)).toBe(40);
}, 180_000);

test('remembering fewer full windows than there are changes no decision (past the memory, the store refuses)', async () => {
  const s = await world.service(
    { ...LIMITS, SMS_LIMIT_PER_PHONE: '1', SMS_LIMIT_PER_ADDRESS: '1000', SMS_LIMIT_GLOBAL_PER_DAY: '300' },
    false,
  );
  const intake = new SmsIntake(s.config.sms, s.store, new MemoryLimiter(20));
  await flood(intake, 0, 300, (i) => ['1', phone(i), address(i)]);
  expect(await pending(s)).toBe(300);
  // Each of the 300 phones again with new codes: far more full windows than the 20 remembered.
  await flood(intake, 0, 1500, (i) => [`n${i}`, phone(i % 300), address(i)]);
  expect(await pending(s)).toBe(300);
}, 60_000);

test('the counters and the duplicate mark survive a restart: a new store and intake on the same database', async () => {
  const env = { ...LIMITS, SMS_LIMIT_GLOBAL_PER_DAY: '8' };
  const first = await world.service(env, false);
  for (let i = 0; i < 5; i += 1) await first.sms.intake.accept(`c${i}`, VICTIM, address(i));
  await first.sms.intake.accept('777', phone(1), address(10));
  await first.sms.close();
  await first.store.close();

  const second = await world.service(env, false);
  await second.sms.intake.accept('c9', VICTIM, address(20)); // the phone's sixth in the hour
  await second.sms.intake.accept('777', phone(1), address(21)); // the app retrying: a duplicate
  expect(await pending(second)).toBe(6);
  // The day's budget of 8 had 6 spent before the restart: two more.
  for (let i = 0; i < 5; i += 1) await second.sms.intake.accept('1', phone(100 + i), address(100 + i));
  expect(await pending(second)).toBe(8);
});

test('two intakes on two connections to one database share every limit, requests arriving at once', async () => {
  const env = { ...LIMITS, SMS_LIMIT_GLOBAL_PER_DAY: '16' };
  const a = await world.service(env, false);
  const b = await world.service(env, false);
  const either = (i: number) => (i % 2 === 0 ? a : b).sms.intake;
  // Forty codes for one phone at once, half to each: five.
  await Promise.all(Array.from({ length: 40 }, (_, i) => either(i).accept(`p${i}`, VICTIM, address(i))));
  expect(await pending(a)).toBe(5);
  // The same phone and code twenty times at once: once.
  await Promise.all(Array.from({ length: 20 }, (_, i) => either(i).accept('4242', phone(1), address(100 + i))));
  expect(await pending(b)).toBe(6);
  // Sixty fresh phones at once: the day's budget of sixteen lets ten more through.
  await Promise.all(Array.from({ length: 60 }, (_, i) => either(i).accept('1', phone(200 + i), address(200 + i))));
  expect(await pending(a)).toBe(16);
});

test('with Redis configured but down, the limits still hold across processes and restarts', async () => {
  const env = { ...LIMITS, REDIS_URL: `redis://127.0.0.1:${await freePort()}`, SMS_LIMIT_GLOBAL_PER_DAY: '12' };
  const a = await world.service(env, false);
  const b = await world.service(env, false);
  for (let i = 0; i < 10; i += 1) await (i % 2 === 0 ? a : b).sms.intake.accept(`r${i}`, VICTIM, address(i));
  await a.sms.intake.accept('555', phone(1), address(50));
  expect(await pending(a)).toBe(6);
  await a.sms.close();
  await a.store.close();
  const c = await world.service(env, false);
  await c.sms.intake.accept('r99', VICTIM, address(60));
  await c.sms.intake.accept('555', phone(1), address(61));
  for (let i = 0; i < 10; i += 1) await (i % 2 === 0 ? b : c).sms.intake.accept('1', phone(300 + i), address(300 + i));
  expect(await pending(c)).toBe(12);
});

test('retention deletes the windows that have ended, and only those', async () => {
  const s = await world.service({ ...LIMITS, SMS_LIMIT_GLOBAL_PER_MINUTE: '2' }, false);
  for (let i = 0; i < 3; i += 1) await s.sms.intake.accept('1', phone(i), address(i));
  expect(await pending(s)).toBe(2);
  // Two queued: their duplicate marks, phones and addresses, and the three budgets.
  const live = await windowRows(s);
  expect(live).toBe(2 * 3 + 3);
  // End the duplicate marks and the per-minute window, as two minutes would.
  const past = new Date(Date.now() - 1000).toISOString();
  const sql = "UPDATE sms_limit_windows SET ends_at = ? WHERE key LIKE 'dup:%' OR key = 'global:all'";
  if (world.db !== null) await world.db.query(sql.replace('?', '$1'), [past]);
  else {
    const db = new Database(s.config.sqlitePath);
    db.prepare(sql).run(past);
    db.close();
  }
  expect(await new Retention(s.store.outbox, s.config.sms, 2).runOnce()).toMatchObject({ windows: 3 });
  expect(await windowRows(s)).toBe(live - 3);
  // The minute's window ended: two more fit it (a new intake: this one remembers the window full
  // until its real end, which the test moved).
  const intake = new SmsIntake(s.config.sms, s.store, new MemoryLimiter());
  for (let i = 3; i < 6; i += 1) await intake.accept('1', phone(i), address(i));
  expect(await pending(s)).toBe(4);
});

describe('real service processes', () => {
  const authCode = (port: number, code: string, to: string) =>
    request(port, '/AuthCodeSending.asmx/AuthCode', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `code=${code}&phone=${encodeURIComponent(to)}`,
    });
  const env = () => ({
    ...LIMITS,
    SMS_DEFAULT_REGION: 'IQ',
    SMS_LIMIT_PER_PHONE: '3',
    ...(world.db === null ? {} : { DATABASE_URL: world.db.url }),
  });
  const queuedIn = async (dbPath: string): Promise<number> => {
    const store = await openStore(loadConfig({ SQLITE_PATH: dbPath, ...(world.db === null ? {} : { DATABASE_URL: world.db.url }) }));
    try {
      return await pending(store);
    } finally {
      await store.close();
    }
  };

  test('killed with SIGKILL and started again: the phone stays limited and the retry of a queued code is a duplicate', async () => {
    const first = await startService({ env: env(), load: false });
    for (let i = 0; i < 3; i += 1) expect((await authCode(first.port, `k${i}`, VICTIM)).status).toBe(200);
    expect((await authCode(first.port, '8181', phone(1))).status).toBe(200);
    first.kill();
    await first.exited;
    const second = await startService({ env: { ...env(), SQLITE_PATH: first.dbPath }, load: false });
    expect((await authCode(second.port, 'k9', VICTIM)).status).toBe(200);
    expect((await authCode(second.port, '8181', phone(1))).status).toBe(200);
    expect(await queuedIn(first.dbPath)).toBe(4);
    await second.waitFor((l) => l.msg === 'AuthCode request not sent' && l.reason === 'duplicate');
    expect(second.lines.filter((l) => l.msg === 'AuthCode request not sent').map((l) => l.limit ?? l.reason)).toEqual([
      'phone',
      'duplicate',
    ]);
  }, 60_000);

  test('WORKERS=2: whichever worker answers, the phone and the duplicate mark are counted once', async () => {
    const s = await startService({ env: { ...env(), WORKERS: '2' }, load: false });
    // A new connection each: the primary hands them to the workers in turn.
    for (let i = 0; i < 10; i += 1) expect((await authCode(s.port, `w${i}`, VICTIM)).status).toBe(200);
    for (let i = 0; i < 6; i += 1) expect((await authCode(s.port, '9191', phone(2))).status).toBe(200);
    expect(await queuedIn(s.dbPath)).toBe(4);
  }, 60_000);
});
