import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { loadConfig, type SmsConfig } from '../src/config';
import { SmsIntake } from '../src/sms/intake';
import { SharedLimiter } from '../src/sms/limits';
import { openSqliteStore } from '../src/store/sqlite';
import type { Store } from '../src/store/store';
import { pendingCount, queued } from './helpers/outbox';
import { captureLog, until } from './helpers/sms-gateway';

/**
 * Limits shared through Redis by several processes (here: intakes with their own Redis connections
 * and store connections over one file), and the fallback when Redis is away. jest.config.js sets
 * TEST_REDIS_URL when the machine's Redis answers, and fails with REQUIRE_REDIS=1 when it does not.
 */
const REDIS_URL = process.env.TEST_REDIS_URL ?? '';
const describeRedis = REDIS_URL === '' ? describe.skip : describe;
const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;

let dir: string;
let prefix: string;
const cleanup: (() => Promise<void>)[] = [];

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sms-redis-'));
  prefix = `t7:${randomBytes(6).toString('hex')}:`;
});

afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** One process's intake: its own store connection and its own Redis connection. */
function processWith(sms: SmsConfig, url: string): { intake: SmsIntake; limiter: SharedLimiter; store: Store } {
  const store = openSqliteStore(path.join(dir, 'shared.db'));
  const limiter = new SharedLimiter(url, prefix);
  cleanup.push(async () => {
    await limiter.close();
    await store.close();
  });
  return { intake: new SmsIntake(sms, store, limiter), limiter, store };
}

const phone = (i: number) => `+96477012${String(i).padStart(5, '0')}`;

describeRedis('limits shared through Redis', () => {
  afterEach(async () => {
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  test('the per-phone, per-address and global limits bite across two processes', async () => {
    const sms = loadConfig({ SMS_LIMIT_PER_PHONE: '5', SMS_LIMIT_PER_ADDRESS: '3', SMS_LIMIT_GLOBAL_PER_MINUTE: '12' }).sms;
    const a = processWith(sms, REDIS_URL);
    const b = processWith(sms, REDIS_URL);
    await until('both are connected', () => a.limiter.shared && b.limiter.shared);
    const either = (i: number) => (i % 2 === 0 ? a : b).intake;

    // One phone, ten codes, ten addresses: five are queued.
    for (let i = 0; i < 10; i += 1) await either(i).accept(String(i), phone(0), `198.51.100.${i}`);
    expect(await pendingCount(a.store)).toBe(5);
    // One address, six phones: three more.
    for (let i = 1; i <= 6; i += 1) await either(i).accept('1', phone(i), '203.0.113.9');
    expect(await pendingCount(a.store)).toBe(8);
    // Fresh phones and addresses: the global ceiling (12 a minute) lets four more through.
    for (let i = 10; i < 20; i += 1) await either(i).accept('1', phone(i), `192.0.2.${i}`);
    expect(await pendingCount(b.store)).toBe(12);
    // The same phone and code from the other process is a duplicate.
    const dup = loadConfig({ SMS_LIMIT_GLOBAL_PER_MINUTE: '100' }).sms;
    const c = processWith(dup, REDIS_URL);
    const d = processWith(dup, REDIS_URL);
    await until('connected', () => c.limiter.shared && d.limiter.shared);
    await c.intake.accept('777', phone(99), '192.0.2.200');
    await d.intake.accept('777', phone(99), '192.0.2.201');
    expect((await queued(d.store)).filter((p) => p.phone === phone(99))).toHaveLength(1);
    // Only hashes are kept in Redis: no phone, no code, no address.
    const redis = new Redis(REDIS_URL);
    cleanup.push(async () => void (await redis.quit()));
    const keys = await redis.keys(`${prefix}*`);
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.join(' ')).not.toMatch(/9647701|777|192\.0\.2|203\.0\.113/);
  });

  test.each([['SMS_LIMIT_GLOBAL_PER_HOUR'], ['SMS_LIMIT_GLOBAL_PER_DAY']])(
    '%s holds across two processes; a save that fails in one gives its allowances back for the retry in the other',
    async (setting) => {
      const sms = loadConfig({ [setting]: '4', SMS_LIMIT_GLOBAL_PER_MINUTE: '1000', SMS_LIMIT_PER_PHONE: '1' }).sms;
      const a = processWith(sms, REDIS_URL);
      const b = processWith(sms, REDIS_URL);
      await until('both are connected', () => a.limiter.shared && b.limiter.shared);
      jest.spyOn(a.store.outbox, 'enqueue').mockRejectedValueOnce(new Error('disk I/O error'));
      await expect(a.intake.accept('1', phone(0), '198.51.100.1')).rejects.toThrow('disk I/O error');
      // The app's retry lands on the other process: no duplicate, the phone's one code not spent.
      await b.intake.accept('1', phone(0), '198.51.100.1');
      expect(await pendingCount(a.store)).toBe(1);
      // Three more fit the budget of four, whichever process takes them.
      for (let i = 1; i < 8; i += 1) await (i % 2 === 0 ? a : b).intake.accept('1', phone(i), `192.0.2.${i}`);
      expect((await queued(a.store)).map((p) => p.phone)).toEqual([0, 1, 2, 3].map(phone));
    },
  );
});

/** A free port of this engineer's range (9400-9499), for a Redis of the test's own. */
async function freePort(): Promise<number> {
  for (let port = 9450; port < 9500; port += 1) {
    const free = await new Promise<boolean>((resolve) => {
      const s = net.createServer().once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('no free port in 9450-9499');
}

(hasRedisServer || process.env.REQUIRE_REDIS === '1' ? test : test.skip)(
  'Redis down: sign-in goes on with per-process limits, said once in the log; shared again when Redis is back',
  async () => {
    const port = await freePort();
    const captured = captureLog();
    cleanup.push(async () => captured.restore());
    const said = (text: RegExp) => captured.lines.filter((l) => text.test(l.msg)).length;
    const sms = loadConfig({ SMS_LIMIT_PER_PHONE: '2' }).sms;
    const a = processWith(sms, `redis://127.0.0.1:${port}`);
    await until('the connection has failed', () => said(/Redis unreachable/) > 0);
    for (let i = 0; i < 4; i += 1) await a.intake.accept(String(i), phone(1), '198.51.100.1');
    expect(await pendingCount(a.store)).toBe(2);
    await new Promise((r) => setTimeout(r, 500)); // reconnection attempts go on: still said once
    expect(said(/Redis unreachable/)).toBe(1);
    expect(a.limiter.shared).toBe(false);

    const server: ChildProcess = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    cleanup.push(async () => {
      server.kill();
      await new Promise((r) => server.once('exit', r));
    });
    await until('the limiter is shared again', () => a.limiter.shared, 10_000);
    expect(said(/Redis is reachable again/)).toBe(1);
    await a.intake.accept('9', phone(2), '198.51.100.1');
    const redis = new Redis(`redis://127.0.0.1:${port}`);
    cleanup.push(async () => void redis.disconnect());
    expect((await redis.keys(`${prefix}*`)).length).toBeGreaterThan(0);
    await a.limiter.close();
  },
);
