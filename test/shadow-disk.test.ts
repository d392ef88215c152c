import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { summarise } from '../scripts/shadow-report';
import { freeBytes } from '../src/basics/disk';
import { total } from '../src/console/samples';
import { parseMetrics } from './helpers/prom-text';
import { logFiles } from '../src/shadow/log-file';
import { tmpfsOver } from './helpers/readiness';
import { request, type Service, servicesPerTest } from './helpers/service';

/**
 * Nothing a client sends fills the disk through the differences log (issue 38, point 2): a real
 * service (as built) shadowing a stand-in legacy host that answers every request otherwise, its
 * SQLite store and its differences log (SHADOW_LOG's default, beside the store) on a 16 MiB tmpfs,
 * flooded with requests of 60 KB that each differ (a line of about 120 KB; before the budget 300 of
 * them filled such a disk and AuthCode answered the server fault). The log stays within
 * SHADOW_LOG_MAX_BYTES, its rotated files counted, and above SHADOW_LOG_KEEP_FREE; a cluster's
 * workers share one budget; every line not written is counted, said once and tallied in the log;
 * AuthCode is served and /readyz stays ready throughout.
 *
 * Needs mount(8) of a tmpfs (root): skipped with a message when refused; REQUIRE_MOUNT=1 (CI)
 * makes that a failure.
 */

const MiB = 1024 * 1024;
const PAD = 60 * 1024;
const service = servicesPerTest();

/** Whether this process may mount a tmpfs: tried once, on a directory of its own. */
function mayMount(): string | null {
  if (process.platform !== 'linux') return 'not Linux';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shadow-disk-probe-'));
  try {
    const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { encoding: 'utf8' });
    if (r.status !== 0) return `mount -t tmpfs refused: ${(r.stderr ?? r.error?.message ?? '').trim()}`;
    spawnSync('umount', [dir]);
    return null;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
const refused = mayMount();
if (refused !== null && process.env.REQUIRE_MOUNT !== '1')
  console.warn(`test/shadow-disk.test.ts SKIPPED: ${refused} (needs root; REQUIRE_MOUNT=1 makes this a failure)`);
const withTmpfs = refused === null || process.env.REQUIRE_MOUNT === '1' ? describe : describe.skip;

/** The stand-in legacy host: every request answered 200 with 60 KB of text the service never writes. */
let legacy: http.Server;
let legacyUrl = '';
beforeAll(async () => {
  legacy = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'Content-Type': 'text/xml; charset=utf-8', 'Cache-Control': 'private, max-age=0' });
      res.end(`<?xml version="1.0" encoding="utf-8"?>\r\n<string xmlns="http://tempuri.org/">${'L'.repeat(PAD)}</string>`);
    });
  });
  await new Promise<void>((resolve) => legacy.listen(0, '127.0.0.1', resolve));
  legacyUrl = `http://127.0.0.1:${(legacy.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  legacy.closeAllConnections();
  await new Promise((resolve) => legacy.close(resolve));
});

/** A service with the store's directory (data/, where SHADOW_LOG's default puts the log) on a 16 MiB tmpfs; the directory to unmount. */
async function onSmallDisk(env: Record<string, string>): Promise<{ s: Service; data: string; log: string }> {
  let data = '';
  const s = await service({ env: { SHADOW_URL: legacyUrl, ...env }, prepare: (_dir, db) => tmpfsOver((data = path.dirname(db)), '16m') });
  return { s, data, log: path.join(data, 'shadow-differences.jsonl') };
}

async function stop(s: Service, data: string): Promise<void> {
  if (s.proc.exitCode === null && s.proc.signalCode === null) s.kill();
  await s.exited;
  const r = spawnSync('umount', [data], { encoding: 'utf8' });
  if (r.status !== 0) spawnSync('umount', ['-l', data]);
}

/** `n` requests of 60 KB, 16 at a time, each answered by the service and differing from the stand-in's answer. */
async function flood(port: number, n: number): Promise<number[]> {
  const body = `id=dev-1001&pad=${'p'.repeat(PAD)}`;
  const statuses: number[] = [];
  let next = 0;
  const client = async () => {
    while (next < n) {
      next++;
      const r = await request(port, '/PushNotificationMobile.asmx/GetTokenDevice', {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body,
      });
      statuses.push(r.status);
    }
  };
  await Promise.all(Array.from({ length: 16 }, client));
  return statuses;
}

const metrics = async (s: Service) => parseMetrics((await request(s.adminPort, '/metrics')).body);
const lines = (m: ReturnType<typeof parseMetrics>, outcome: string) => total(m, 'asmx_shadow_log_lines_total', { outcome });

/** Once every copy has settled and every difference's line has had its outcome: the metrics then. */
async function settled(s: Service, copies: number): Promise<ReturnType<typeof parseMetrics>> {
  for (let i = 0; i < 600; i++) {
    const m = await metrics(s);
    const differences = total(m, 'asmx_shadow_exchanges_total', { outcome: 'difference' });
    if (total(m, 'asmx_shadow_exchanges_total') >= copies && total(m, 'asmx_shadow_log_lines_total') === differences) return m;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the copies never settled: ${JSON.stringify((await metrics(s)).filter((x) => x.name.startsWith('asmx_shadow')))}`);
}

const onDisk = (log: string) => logFiles(log).reduce((a, f) => a + fs.statSync(f).size, 0);
const free = (dir: string) => freeBytes(fs.statfsSync(dir));
/** The disk the store's files hold (the database, its WAL and shared memory): every file in `dir` but the log's and the filler. */
const storeBytes = (dir: string, log: string) =>
  fs
    .readdirSync(dir)
    .map((name) => path.join(dir, name))
    .filter((file) => !logFiles(log).includes(file) && path.basename(file) !== 'filler')
    .reduce((a, file) => a + fs.statSync(file).blocks * 512, 0);

/** What a client needs most: its sign-in code queued, and the instance ready. */
async function stillServes(s: Service): Promise<void> {
  const code = await request(s.port, '/AuthCodeSending.asmx/AuthCode?code=4821&phone=%2B9647701234567');
  expect([code.status, code.body]).toEqual([200, '']);
  expect((await request(s.adminPort, '/readyz')).status).toBe(200);
}

withTmpfs('the differences log on a 16 MiB disk beside the store', () => {
  test('WORKERS=2, every line tried (SHADOW_LOG_EXAMPLES high): 300 differences of 120 KB rotate within SHADOW_LOG_MAX_BYTES, one budget for both workers', async () => {
    const { s, data, log } = await onSmallDisk({
      WORKERS: '2',
      SHADOW_LOG_MAX_BYTES: String(2 * MiB),
      SHADOW_LOG_KEEP_FREE: String(4 * MiB),
      SHADOW_LOG_EXAMPLES: '1000000',
    });
    try {
      expect(new Set(await flood(s.port, 300))).toEqual(new Set([200]));
      const m = await settled(s, 300);
      // First what a client needs (before the budget, the disk was full by now and AuthCode answered the server fault).
      await stillServes(s);
      const differences = total(m, 'asmx_shadow_exchanges_total', { outcome: 'difference' });
      expect(differences).toBeGreaterThan(250);
      // Each difference's line written (the oldest rotated away since), or, while 4 MiB of lines
      // waited for the disk already, refused as busy: how many depends on the machine, not the total.
      expect(lines(m, 'written') + lines(m, 'busy')).toBe(differences);
      expect([lines(m, 'disk_floor'), lines(m, 'error')]).toEqual([0, 0]);
      // The first 4 MiB of lines at least are written (the primary's queue takes that much): more than the budget.
      const lineBytes = fs.readFileSync(log, 'utf8').indexOf('\n') + 1;
      expect(lines(m, 'written') * lineBytes).toBeGreaterThan(2 * MiB);
      expect(logFiles(log)).toEqual([`${log}.3`, `${log}.2`, `${log}.1`, log]);
      expect(onDisk(log)).toBeLessThanOrEqual(2 * MiB);
      expect(onDisk(log)).toBeGreaterThan(MiB);
      expect(total(m, 'asmx_shadow_log_bytes')).toBeLessThanOrEqual(2 * MiB);
      expect(free(data)).toBeGreaterThan(8 * MiB);
    } finally {
      await stop(s, data);
    }
  }, 180_000);

  test('under the floor (SHADOW_LOG_KEEP_FREE) nothing more is written: counted, said once, tallied; written again once space is back', async () => {
    const KEEP = 6 * MiB;
    const { s, data, log } = await onSmallDisk({ SHADOW_LOG_KEEP_FREE: String(KEEP), SHADOW_LOG_EXAMPLES: '1000000' });
    try {
      // Something else took 5 MiB of the disk: about 4 MiB left above the floor, 18 MB of lines coming,
      // in waves of ten each settled before the next, so that no line waits behind 4 MiB of others (busy).
      fs.writeFileSync(path.join(data, 'filler'), Buffer.alloc(5 * MiB));
      const storeBefore = storeBytes(data, log);
      let m: ReturnType<typeof parseMetrics> = [];
      for (let wave = 1; wave <= 15; wave++) {
        expect(new Set(await flood(s.port, 10))).toEqual(new Set([200]));
        m = await settled(s, wave * 10);
      }
      // The log left the floor: what is free now, but for what the store took meanwhile (the room
      // the floor is kept for, taken before or after the log's last line as the copies settled).
      expect(free(data) + (storeBytes(data, log) - storeBefore)).toBeGreaterThanOrEqual(KEEP);
      await stillServes(s);
      const differences = total(m, 'asmx_shadow_exchanges_total', { outcome: 'difference' });
      expect(lines(m, 'written')).toBeGreaterThan(10);
      expect(lines(m, 'disk_floor')).toBeGreaterThan(10);
      expect(lines(m, 'written') + lines(m, 'disk_floor')).toBe(differences);
      const said = s.lines.filter((l) =>
        l.msg.startsWith('shadow differences log not written: its file system has less free than SHADOW_LOG_KEEP_FREE'),
      );
      expect(said).toEqual([expect.objectContaining({ level: 'warn', keepFreeBytes: KEEP })]);

      // Room again: the next differences are written, and that is said once, with how many were not.
      const floored = lines(m, 'disk_floor');
      fs.unlinkSync(path.join(data, 'filler'));
      expect(new Set(await flood(s.port, 10))).toEqual(new Set([200]));
      m = await settled(s, 160);
      expect(lines(m, 'written')).toBeGreaterThan(differences - floored);
      expect(s.lines.filter((l) => l.msg === 'shadow differences log written again')).toEqual([
        expect.objectContaining({ notWritten: floored }),
      ]);

      // A stop writes the tally of the lines not written; shadow-report counts them.
      s.proc.kill('SIGTERM');
      expect((await s.exited).code).toBe(0);
      const summary = await summarise(logFiles(log).map((f) => fs.createReadStream(f)));
      expect(summary.notWritten).toEqual({ disk_floor: floored });
      expect(summary.lines + floored).toBe(lines(m, 'written') + lines(m, 'disk_floor'));
    } finally {
      await stop(s, data);
    }
  }, 180_000);

  test('one kind flooded, as an attacker makes it: SHADOW_LOG_EXAMPLES lines written, the rest counted; the console and shadow-report say how many were not', async () => {
    const { s, data, log } = await onSmallDisk({ SHADOW_LOG_KEEP_FREE: String(4 * MiB) });
    try {
      expect(new Set(await flood(s.port, 200))).toEqual(new Set([200]));
      const m = await settled(s, 200);
      await stillServes(s);
      const differences = total(m, 'asmx_shadow_exchanges_total', { outcome: 'difference' });
      expect([lines(m, 'written'), lines(m, 'examples')]).toEqual([10, differences - 10]);
      expect(onDisk(log)).toBeLessThan(2 * MiB);
      const page = (await request(s.adminPort, '/console')).body;
      expect(page).toContain(
        `Differences log since this process started: 10 lines written, ${(differences - 10).toLocaleString('en-US')} not (${(differences - 10).toLocaleString('en-US')} past SHADOW_LOG_EXAMPLES of their kind this hour;`,
      );
      s.proc.kill('SIGTERM');
      expect((await s.exited).code).toBe(0);
      const summary = await summarise(logFiles(log).map((f) => fs.createReadStream(f)));
      expect(summary).toMatchObject({
        lines: 10,
        notWritten: { examples: differences - 10 },
        byOperation: { 'GetTokenDevice httppost': differences },
      });
    } finally {
      await stop(s, data);
    }
  }, 180_000);

  test('the defaults on a small disk: the floor (256 MiB or 5%) is above what it has, so no line is written, each counted', async () => {
    const { s, data, log } = await onSmallDisk({});
    try {
      expect(new Set(await flood(s.port, 40))).toEqual(new Set([200]));
      const m = await settled(s, 40);
      await stillServes(s);
      // Ten of the kind tried (its examples this hour), refused for the floor; the rest counted as past them.
      expect([lines(m, 'written'), lines(m, 'disk_floor'), lines(m, 'examples')]).toEqual([
        0,
        10,
        total(m, 'asmx_shadow_exchanges_total', { outcome: 'difference' }) - 10,
      ]);
      expect(fs.existsSync(log)).toBe(false);
    } finally {
      await stop(s, data);
    }
  }, 180_000);
});
