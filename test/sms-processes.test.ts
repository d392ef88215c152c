import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config';
import { openStore } from '../src/store/open';
import type { Store } from '../src/store/store';
import { TEST_STORE, testDatabase, type TestDatabase } from './helpers/postgres';
import { FakeGateway, until } from './helpers/sms-gateway';

/**
 * Real service processes (node, each with its own store connection and dispatcher) over one
 * database: the SQLite file, or one PostgreSQL schema in jest's postgres project.
 */

let gateway: FakeGateway;
let env: Record<string, string>;
let dir: string;
let db: TestDatabase | null;
let store: Store;
const children: ChildProcess[] = [];

beforeEach(async () => {
  gateway = new FakeGateway();
  const url = await gateway.listen();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sms-proc-'));
  db = TEST_STORE === 'postgres' ? await testDatabase('t7') : null;
  env = {
    SQLITE_PATH: path.join(dir, 'shared.db'),
    ...(db === null ? {} : { DATABASE_URL: db.url }),
    SMS_GATEWAY: 'http',
    SMS_HTTP_URL: `${url}/send`,
    SMS_HTTP_TIMEOUT_MS: '1000',
    // Twice the send time-out: a loaded machine must not make the lease the reason for a second send.
    SMS_LEASE_MS: '3000',
    SMS_RETRY_BASE_MS: '20',
    SMS_POLL_MS: '25',
    SMS_DEFAULT_REGION: 'IQ',
    LOG_LEVEL: 'silent',
  };
  store = await openStore(loadConfig(env));
});

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
    }
  }
  await store.close();
  await gateway.close();
  await db?.drop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Starts a service process; resolves once its dispatcher runs. `output` collects its log (stderr). */
async function serviceProcess(extra: Record<string, string> = {}, output: string[] = []): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    ['-r', path.join(__dirname, 'helpers', 'ts-register.js'), path.join(__dirname, 'helpers', 'sms-process.ts')],
    {
      env: { ...process.env, ...env, ...extra },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.push(child);
  child.stderr!.on('data', (d: Buffer) => output.push(d.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`the service process exited (${code}) before it was ready`)));
  });
  return child;
}

const stopped = (child: ChildProcess, signal: NodeJS.Signals) =>
  new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.kill(signal);
  });

const delivered = async () => (await store.outbox.counts()).delivered;

test('two service processes on one database never send a message twice', async () => {
  gateway.delayMs = 10;
  const n = 80;
  for (let i = 0; i < n; i += 1) await store.outbox.enqueue(String(i), `+96477012${String(i).padStart(5, '0')}`);
  // The claims are what is tested: a time-out no loaded machine reaches, or a late answer's counted
  // resend (which the design allows) would be counted as a second send here.
  const slowMachine = { SMS_HTTP_TIMEOUT_MS: '10000', SMS_LEASE_MS: '20000' };
  const [a, b] = await Promise.all([serviceProcess(slowMachine), serviceProcess(slowMachine)]);
  await until('every message is delivered', async () => (await delivered()) === n, 20_000);
  expect(await Promise.all([stopped(a!, 'SIGTERM'), stopped(b!, 'SIGTERM')])).toEqual([0, 0]);
  const to = gateway.requests.map((r) => (JSON.parse(r.body) as { to: string }).to);
  expect(to).toHaveLength(n);
  expect(new Set(to).size).toBe(n);
  // Each sent at its first claim: no retry, so no resend among them.
  expect((await store.outbox.list(false, 1000)).map((r) => r.attempts)).toEqual(Array(n).fill(1));
}, 120_000);

test('a process killed mid-send: the next one takes the message over when the lease ends, delivers it once, and counts the resend', async () => {
  // Every request hangs, delivering nothing, until the first process is dead. Not only its first
  // send: on a loaded machine this test may see that request late, after the process's own 1 s
  // time-out has already sent a retry; an answered retry was the third request this test once saw.
  gateway.holding = true;
  await store.outbox.enqueue('9999', '+9647701234567');
  const first = await serviceProcess();
  await until('the first send is under way', () => gateway.requests.length >= 1);
  await stopped(first, 'SIGKILL');
  const output: string[] = [];
  // Starting the next process takes far longer than reading what the dead one had sent.
  const second = await serviceProcess({ LOG_LEVEL: 'warn' }, output);
  const sentByFirst = gateway.requests.length;
  gateway.holding = false;
  await until('the message is delivered', async () => (await delivered()) === 1, 10_000);
  await stopped(second, 'SIGTERM');
  expect(gateway.requests).toHaveLength(sentByFirst + 1);
  expect(gateway.delivered).toBe(1);
  const [row] = await store.outbox.list(false, 10);
  expect(row).toMatchObject({ status: 'delivered', hasCode: false });
  // The first send's start was recorded: the takeover knows it is a resend and says so, once.
  const resends = output
    .join('')
    .split('\n')
    .filter((l) => l.includes("SMS sent again: the provider's answer to an earlier attempt was lost"));
  expect(resends).toHaveLength(1);
}, 120_000);
