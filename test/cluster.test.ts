import fs from 'node:fs';
import path from 'node:path';
import { Restarts } from '../src/process/restarts';
import { type LogLine, request, type Service, servicesPerTest, TOKEN_PATH } from './helpers/service';

/** The cluster primary (WORKERS > 1): replacing workers with backoff, giving up, migrating once. */

const service = servicesPerTest();
const FAULT = path.join(__dirname, 'fixtures', 'faults', 'worker-start.js');

/** A cluster whose workers fail to start while `flag` exists (test/fixtures/faults/worker-start.js). */
function faulty(flag: string, env: Record<string, string> = {}) {
  return { WORKERS: '2', NODE_OPTIONS: `--require ${FAULT}`, FAULT_WORKER_START_FILE: flag, ...env };
}

const failedStarts = (s: Service) => s.lines.filter((l) => l.msg === 'a worker failed to start; starting another');
const primaryPid = (s: Service) => s.proc.pid;

test('the restart delay doubles from 100 ms to 30 s, is short again after a worker served 60 s, and gives up after 5 failed starts with none serving', () => {
  const r = new Restarts();
  expect([1, 2, 3, 4].map(() => r.exited(false, 1))).toEqual([100, 200, 400, 800]);
  // Others serve: a fifth (and later) failure is retried, not given up on.
  expect(r.exited(false, 1)).toBe(1600);
  for (let i = 0; i < 10; i += 1) r.exited(true, 1);
  expect(r.exited(true, 1)).toBe(30_000);
  r.steady();
  expect(r.exited(true, 1)).toBe(100);
  r.started();
  expect([1, 2, 3, 4].map(() => r.exited(false, 0))).toEqual([200, 400, 800, 1600]);
  expect(r.exited(false, 0)).toBeNull();
});

test('a worker that fails to start is retried with backoff while the other keeps serving; it serves once it can', async () => {
  const flag = path.join(fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'cluster-fault-')), 'fail');
  const s = await service({ env: faulty(flag) });
  fs.writeFileSync(flag, '');
  const victim = (await request(s.port, TOKEN_PATH).then(() => s.waitFor((l) => l.msg === 'request'))).pid;
  process.kill(victim, 'SIGKILL');
  expect(await s.waitFor((l) => l.msg === 'worker died; starting another')).toMatchObject({ workerPid: victim, inMs: 100 });
  // The replacement fails, again and again: each retry waits twice as long as the one before.
  const results: number[] = [];
  while (failedStarts(s).length < 6) {
    results.push((await request(s.port, TOKEN_PATH)).status);
    await new Promise((r) => setTimeout(r, 50));
  }
  expect(
    failedStarts(s)
      .slice(0, 6)
      .map((l) => [l.failedStarts, l.inMs]),
  ).toEqual([
    [1, 200],
    [2, 400],
    [3, 800],
    [4, 1600],
    [5, 3200],
    [6, 6400],
  ]);
  expect(failedStarts(s).every((l) => l.level === 'error' && l.exitCode === 1)).toBe(true);
  // Meanwhile the other worker answered everything, and the primary is still there.
  expect(results.length).toBeGreaterThan(20);
  expect(results.filter((r) => r !== 200)).toEqual([]);
  expect(s.proc.exitCode).toBeNull();
  // The fault gone, the next retry serves.
  fs.rmSync(flag);
  const before = new Set(s.lines.map((l) => l.pid));
  const servedByReplacement = () => s.lines.some((l) => l.msg === 'request' && !before.has(l.pid));
  for (let i = 0; i < 150 && !servedByReplacement(); i += 1) {
    expect((await request(s.port, TOKEN_PATH)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(servedByReplacement()).toBe(true);
  expect(s.proc.exitCode).toBeNull();
}, 60_000);

test('the primary exits 1 after 5 failed starts in a row with no worker serving', async () => {
  const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'cluster-fault-'));
  const flag = path.join(dir, 'fail');
  fs.writeFileSync(flag, '');
  const s = await service({ env: faulty(flag), waitListening: false });
  expect(await s.exited).toEqual({ code: 1, signal: null });
  expect(failedStarts(s)).toHaveLength(4);
  const gaveUp = s.lines.find((l) => l.msg === 'workers keep failing to start and none is serving; stopping') as LogLine;
  expect(gaveUp).toMatchObject({ level: 'error', failedStarts: 5, pid: primaryPid(s) });
  // Each start said why it failed: the five counted, and the replacement the fourth failure scheduled
  // if it had started before the fifth failed (a start slower than the backoff, on a loaded machine).
  // The two first workers and the four replacements are all there can be.
  const said = s.text.filter((t) => t.startsWith('error: fault injected')).length;
  expect(said).toBeGreaterThanOrEqual(5);
  expect(said).toBeLessThanOrEqual(6);
  expect(s.lines.find((l) => l.msg === 'stopped')).toMatchObject({ exitCode: 1 });
}, 30_000);

test('migrations run once, in the primary, before any worker starts', async () => {
  const s = await service({ env: { WORKERS: '2' }, load: false, fresh: true });
  const migrated = s.lines.filter((l) => l.msg === 'schema migrated');
  expect(migrated).toHaveLength(1);
  expect(migrated[0]).toMatchObject({ pid: primaryPid(s), from: 0 });
  // A worker's request line, should its start have logged nothing (the default SMS gateway says nothing).
  await request(s.port, TOKEN_PATH);
  await s.waitFor((l) => l.pid !== primaryPid(s));
  const first = s.lines.findIndex((l) => l.pid !== primaryPid(s));
  expect(first).toBeGreaterThan(s.lines.indexOf(migrated[0]!));
});
