import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import client from 'prom-client';
import { format, summarise } from '../scripts/shadow-report';
import { log } from '../src/basics/log';
import { latestDifferences } from '../src/console/differences';
import { EXAMPLES_WINDOW_MS, Examples, kindOf, MAX_KINDS, OTHER_KINDS } from '../src/shadow/examples';
import { GENERATIONS, keepFreeOf, logFiles, openLogFile, PENDING_MAX, plan } from '../src/shadow/log-file';
import { relayToPrimary, type LogLine } from '../src/shadow/log-relay';
import { type DifferenceLine, isTally, type NotWrittenLine, openReport } from '../src/shadow/report';

/**
 * The differences log's rules, one by one (test/shadow-disk.test.ts floods a real service on a
 * small file system): the byte budget and its rotation, the free-space floor, examples per kind and
 * the tallies of the rest, a cluster worker's relay, and the readers (shadow-report, the console)
 * over rotated files.
 */

const KiB = 1024;
const MiB = 1024 * KiB;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'shadow-log-test-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
let files = 0;
const fresh = () => path.join(tmp, `log-${++files}`, 'differences.jsonl');
const size = (f: string) => (fs.existsSync(f) ? fs.statSync(f).size : 0);
const onDisk = (file: string) => logFiles(file).reduce((a, f) => a + size(f), 0);
afterEach(() => jest.restoreAllMocks());

/** A statfs answer: `free` bytes of a file system of `total`. */
const statfs = (free: number, total = 100 * MiB): fs.StatsFs =>
  ({ type: 0, bsize: 4096, blocks: total / 4096, bfree: free / 4096, bavail: free / 4096, files: 0, ffree: 0 }) as fs.StatsFs;

describe('the byte budget (plan)', () => {
  const max = 4 * MiB; // each of the four files a quarter: 1 MiB

  test('a line goes into the file written while it fits its quarter; past it the file is rotated, the oldest replaced', () => {
    expect(plan([0, 0, 0, 0], 100 * KiB, max)).toEqual({ rotate: false, remove: [], freed: 0 });
    expect(plan([MiB - 100 * KiB, 0, 0, 0], 100 * KiB, max)).toEqual({ rotate: false, remove: [], freed: 0 });
    expect(plan([MiB - 100 * KiB, 0, 0, 0], 100 * KiB + 1, max)).toEqual({ rotate: true, remove: [], freed: 0 });
    // Full: the rotation drops FILE.3, whose bytes it frees.
    expect(plan([MiB, MiB, MiB, 900 * KiB], 200 * KiB, max)).toEqual({ rotate: true, remove: [], freed: 900 * KiB });
  });

  test('a line longer than a file may be is refused; an empty file takes any line that fits a quarter', () => {
    expect(plan([0, 0, 0, 0], MiB + 1, max)).toBe('budget');
    expect(plan([0, 0, 0, 0], MiB, max)).toEqual({ rotate: false, remove: [], freed: 0 });
  });

  test('a log over the budget (written before it, or under a larger one) loses its oldest files until the line fits', () => {
    // 20 MiB rotated out under an old setting: once FILE is rotated, FILE.3 and FILE.2 go, the oldest first.
    expect(plan([MiB, 10 * MiB, 10 * MiB, 0], 10, max)).toEqual({ rotate: true, remove: [3, 2], freed: 20 * MiB });
    expect(plan([10, 10 * MiB, 0, 0], 10, max)).toEqual({ rotate: false, remove: [1], freed: 10 * MiB });
  });

  test('never more than the budget: any sizes within it, any line, the plan keeps the total within it', () => {
    for (let i = 0; i < 2000; i++) {
      const share = max / GENERATIONS;
      const sizes = Array.from({ length: GENERATIONS }, () => Math.floor(Math.random() * share));
      const line = 1 + Math.floor(Math.random() * share);
      const p = plan(sizes, line, max);
      if (p === 'budget') throw new Error('a line within a quarter refused');
      const after = p.rotate ? [0, ...sizes.slice(0, -1)] : [...sizes];
      for (const n of p.remove) after[n] = 0;
      after[0] += line;
      expect(after[0]).toBeLessThanOrEqual(share);
      expect(after.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(max);
    }
  });

  test('the floor: SHADOW_LOG_KEEP_FREE when set, else the larger of 256 MiB and 5% of the file system', () => {
    expect(keepFreeOf(8 * MiB, statfs(0, 1024 * MiB))).toBe(8 * MiB);
    expect(keepFreeOf(null, statfs(0, 1024 * MiB))).toBe(256 * MiB);
    expect(keepFreeOf(null, statfs(0, 100 * 1024 * MiB))).toBe(5 * 1024 * MiB);
  });
});

describe('the file', () => {
  test('written past its budget many times over, it stays within it: four files, the newest lines kept, in order', async () => {
    const file = fresh();
    const pen = openLogFile(file, { maxBytes: MiB, keepFree: 4 * MiB });
    const line = (i: number) => `${JSON.stringify({ i, pad: 'x'.repeat(20 * KiB) })}\n`;
    const outcomes = [];
    for (let i = 0; i < 200; i++) outcomes.push(await pen.append(line(i)));
    await pen.close();
    expect(new Set(outcomes)).toEqual(new Set(['written']));
    expect(logFiles(file)).toEqual([`${file}.3`, `${file}.2`, `${file}.1`, file]);
    expect(onDisk(file)).toBeLessThanOrEqual(MiB);
    expect(pen.bytes).toBe(onDisk(file));
    for (const f of logFiles(file)) expect(size(f)).toBeLessThanOrEqual(MiB / 4);
    const kept = logFiles(file).flatMap((f) =>
      fs
        .readFileSync(f, 'utf8')
        .split('\n')
        .slice(0, -1)
        .map((l) => (JSON.parse(l) as { i: number }).i),
    );
    // The newest, without a gap: all but the last few quarters' worth are gone.
    expect(kept.at(-1)).toBe(199);
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, k) => 200 - kept.length + k));
    expect(kept.length).toBeGreaterThan(30);
  });

  test('an old log over the budget is cut down to it at the first rotation', async () => {
    const file = fresh();
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(`${file}.1`, 'x'.repeat(3 * MiB));
    fs.writeFileSync(file, 'y'.repeat(200 * KiB));
    const pen = openLogFile(file, { maxBytes: MiB, keepFree: 4 * MiB });
    expect(pen.bytes).toBe(3 * MiB + 200 * KiB);
    expect(await pen.append(`${'z'.repeat(100 * KiB)}\n`)).toBe('written');
    await pen.close();
    expect(onDisk(file)).toBeLessThanOrEqual(MiB);
    expect(fs.existsSync(`${file}.2`)).toBe(false);
  });

  test('under the floor nothing is written, each line counted, and said once; written again once there is room, and said so', async () => {
    const file = fresh();
    let free = 100 * MiB;
    jest.spyOn(fs, 'statfsSync').mockImplementation(() => statfs(free));
    const warn = jest.spyOn(log, 'warn').mockImplementation(() => undefined);
    const info = jest.spyOn(log, 'info').mockImplementation(() => undefined);
    const pen = openLogFile(file, { maxBytes: 64 * MiB, keepFree: 10 * MiB });
    const line = `${'x'.repeat(100 * KiB)}\n`;
    expect(await pen.append(line)).toBe('written');
    free = 10 * MiB + 50 * KiB; // not room for a line above the floor
    const refused = await Promise.all(Array.from({ length: 20 }, () => pen.append(line)));
    expect(new Set(refused)).toEqual(new Set(['disk_floor']));
    expect(size(file)).toBe(line.length);
    expect(warn.mock.calls).toEqual([
      [
        expect.stringMatching(/^shadow differences log not written: its file system has less free than SHADOW_LOG_KEEP_FREE/),
        expect.objectContaining({ keepFreeBytes: 10 * MiB }),
      ],
    ]);
    free = 50 * MiB;
    expect(await pen.append(line)).toBe('written');
    expect(info.mock.calls).toEqual([['shadow differences log written again', expect.objectContaining({ notWritten: 20 })]]);
    await pen.close();
  });

  test('the default floor (256 MiB or 5%) keeps a small disk free of the log altogether', async () => {
    const file = fresh();
    jest.spyOn(fs, 'statfsSync').mockImplementation(() => statfs(200 * MiB, 1024 * MiB));
    jest.spyOn(log, 'warn').mockImplementation(() => undefined);
    const pen = openLogFile(file, { maxBytes: 64 * MiB, keepFree: null });
    expect(await pen.append('{}\n')).toBe('disk_floor');
    await pen.close();
    expect(fs.existsSync(file)).toBe(false);
  });

  test('a disk behind: lines past PENDING_MAX waiting are refused (busy), not held', async () => {
    const file = fresh();
    const pen = openLogFile(file, { maxBytes: 999_999_999, keepFree: 4 * MiB });
    jest.spyOn(log, 'warn').mockImplementation(() => undefined);
    const line = `${'x'.repeat(512 * KiB)}\n`;
    // Appended in one go: none is written before the last is asked for.
    const outcomes = await Promise.all(Array.from({ length: 16 }, () => pen.append(line)));
    await pen.close();
    const written = outcomes.filter((o) => o === 'written').length;
    expect(written).toBe(Math.floor(PENDING_MAX / line.length));
    expect(outcomes.filter((o) => o === 'busy').length).toBe(16 - written);
  });

  test('a file that cannot be written: each line refused (error), said once, never thrown', async () => {
    const blocker = path.join(tmp, 'not-a-directory');
    fs.writeFileSync(blocker, '');
    const warn = jest.spyOn(log, 'warn').mockImplementation(() => undefined);
    const pen = openLogFile(path.join(blocker, 'differences.jsonl'), { maxBytes: MiB, keepFree: 4 * MiB });
    expect(await Promise.all([pen.append('{}\n'), pen.append('{}\n')])).toEqual(['error', 'error']);
    expect(warn).toHaveBeenCalledTimes(1);
    await pen.close();
  });
});

const line = (operation: string, kind: string, n: number): DifferenceLine => ({
  time: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
  requestId: `r-${n}`,
  mode: 'service-first',
  endpoint: 'PushNotificationMobile',
  operation,
  binding: 'httpget',
  request: { method: 'GET', url: `/PushNotificationMobile.asmx/${operation}?id=${n}`, headers: {}, body: '' },
  legacy: { status: 200, headers: {}, body: '<string>a</string>' },
  ours: { status: 200, headers: {}, body: '<string>b</string>' },
  differences: [{ kind, detail: `${kind}: a vs b` }],
});

describe('examples per kind', () => {
  test('SHADOW_LOG_EXAMPLES of each kind an hour; the rest counted, tallied at the hour, and a new hour has its examples again', () => {
    let now = 0;
    const ex = new Examples(2, () => now);
    const a = kindOf('GetTokenDevice', 'httpget', false, ['body text of /string', 'status: legacy 200, ours 500', 'body text of /string']);
    const b = kindOf('GetTokenDevice', 'soap11', false, ['body text of /string']);
    expect(a.kinds).toEqual(['body text of /string', 'status: legacy 200, ours 500']);
    expect([ex.take(a), ex.take(a), ex.take(a), ex.take(b), ex.take(a)]).toEqual([true, true, false, true, false]);
    ex.missed(b, 'disk_floor');
    now = EXAMPLES_WINDOW_MS - 1;
    expect(ex.roll()).toEqual([]);
    now = EXAMPLES_WINDOW_MS;
    expect(ex.roll()).toEqual([
      { ...a, since: new Date(0).toISOString(), notWritten: { examples: 2 } },
      { ...b, since: new Date(0).toISOString(), notWritten: { disk_floor: 1 } },
    ]);
    expect([ex.take(a), ex.take(a), ex.take(a)]).toEqual([true, true, false]);
    // A tally that could not be written is carried into the next.
    ex.carry({ ...a, since: new Date(0).toISOString(), notWritten: { examples: 5 } });
    expect(ex.roll(true)).toEqual([{ ...a, since: new Date(0).toISOString(), notWritten: { examples: 6 } }]);
  });

  test(`past ${MAX_KINDS} kinds an hour, the others share one per operation and binding: what is kept stays bounded`, () => {
    const ex = new Examples(1);
    for (let i = 0; i < MAX_KINDS; i++) expect(ex.take(kindOf('GetTokenDevice', 'httpget', false, [`attribute /a/@x${i}`]))).toBe(true);
    expect(ex.take(kindOf('GetTokenDevice', 'httpget', false, ['attribute /a/@y1']))).toBe(true);
    expect(ex.take(kindOf('GetTokenDevice', 'httpget', false, ['attribute /a/@y2']))).toBe(false);
    expect(ex.roll(true)).toEqual([
      {
        operation: 'GetTokenDevice',
        binding: 'httpget',
        noise: false,
        kinds: [OTHER_KINDS],
        since: expect.any(String),
        notWritten: { examples: 1 },
      },
    ]);
  });
});

async function logOutcomes(): Promise<Record<string, number>> {
  const values = (await client.register.getSingleMetric('asmx_shadow_log_lines_total')!.get()).values;
  return Object.fromEntries(values.map((v) => [String(v.labels.outcome), v.value]));
}

describe('the report', () => {
  test('a flood of one kind: its examples written, the rest counted, and their tally written at the stop; shadow-report and the console read it', async () => {
    const file = fresh();
    const before = await logOutcomes();
    const report = openReport(file, { logMaxBytes: 64 * MiB, logKeepFree: 4 * MiB, logExamples: 3 });
    for (let n = 0; n < 50; n++) report.write(line('GetTokenDevice', 'body text of /string', n));
    report.write(line('GetStudentSchool', 'status: legacy 200, ours 500', 50));
    await report.close();
    const after = await logOutcomes();
    expect([after.written - (before.written ?? 0), after.examples - (before.examples ?? 0)]).toEqual([4, 47]);
    const lines = fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .slice(0, -1)
      .map((l) => JSON.parse(l) as DifferenceLine | NotWrittenLine);
    expect(lines.filter((l) => !isTally(l)).map((l) => (l as DifferenceLine).requestId)).toEqual(['r-0', 'r-1', 'r-2', 'r-50']);
    expect(lines.filter(isTally)).toEqual([
      {
        time: expect.any(String),
        since: expect.any(String),
        operation: 'GetTokenDevice',
        binding: 'httpget',
        noise: false,
        kinds: ['body text of /string'],
        notWritten: { examples: 47 },
      },
    ]);
    const summary = await summarise(logFiles(file).map((f) => fs.createReadStream(f)));
    expect(summary).toMatchObject({
      lines: 4,
      notWritten: { examples: 47 },
      byOperation: { 'GetTokenDevice httpget': 50, 'GetStudentSchool httpget': 1 },
    });
    expect(summary.kinds.map((k) => [k.kind, k.count, k.example.requestId])).toEqual([
      ['body text of /string', 50, 'r-0'],
      ['status: legacy 200, ours 500', 1, 'r-50'],
    ]);
    expect(format(summary)).toMatch(
      /^51 requests with differences; 4 written to the log, 47 not \(47 past SHADOW_LOG_EXAMPLES of their kind an hour\): counted only\n/,
    );
    expect(latestDifferences(file, 5).map((d) => d.requestId)).toEqual(['r-50', 'r-2', 'r-1', 'r-0']);
  });

  test('over rotated files: shadow-report reads them oldest first, the console the newest across them', async () => {
    const file = fresh();
    const report = openReport(file, { logMaxBytes: MiB, logKeepFree: 4 * MiB, logExamples: 1_000_000 });
    const big = (n: number) => ({
      ...line('GetTokenDevice', 'body text of /string', n),
      ours: { status: 200, headers: {}, body: 'x'.repeat(60 * KiB) },
    });
    for (let n = 0; n < 40; n++) report.write(big(n));
    await report.close();
    expect(logFiles(file).length).toBe(GENERATIONS);
    expect(onDisk(file)).toBeLessThanOrEqual(MiB);
    const summary = await summarise(logFiles(file).map((f) => fs.createReadStream(f)));
    expect(summary.kinds[0].example.requestId).toBe(`r-${40 - summary.lines}`);
    // The file written holds one line just after a rotation: the console reads on into FILE.1.
    const latest = latestDifferences(file, 5).map((d) => d.requestId);
    expect(latest).toEqual(['r-39', 'r-38', 'r-37', 'r-36', 'r-35']);
  });

  test('shadow-report reads a hand-made or damaged log without failing: a tally it cannot read is skipped as unreadable', async () => {
    const text = [
      'null',
      '{"notWritten":null,"kinds":[]}',
      '{"notWritten":{"examples":"many","disk_floor":-3,"busy":2},"kinds":["k"],"operation":"GetAboutUs","binding":"httpget"}',
      '{"notWritten":{},"kinds":"k"}',
    ].join('\n');
    const summary = await summarise(Readable.from([text]));
    expect(summary).toMatchObject({ lines: 0, unreadable: 3, notWritten: { busy: 2 }, byOperation: { 'GetAboutUs httpget': 2 } });
  });
});

describe("a cluster worker's relay to its primary", () => {
  test('each line is answered with its outcome and the log size; past PENDING_MAX unanswered, busy; the primary gone, error', async () => {
    const sent: LogLine[] = [];
    const relay = relayToPrimary((m) => (sent.push(m), true));
    const first = relay.append('{"a":1}\n');
    relay.written({ type: 'shadow-logged', id: sent[0].id, outcome: 'written', bytes: 8 });
    expect([await first, relay.bytes]).toEqual(['written', 8]);
    const big = `${'x'.repeat(PENDING_MAX - 10)}\n`;
    const held = relay.append(big);
    expect(await relay.append('{"b":2}\n'.repeat(4))).toBe('busy');
    relay.gone();
    expect(await held).toBe('error');
    // A primary that cannot be sent to: error at once.
    expect(await relayToPrimary(() => false).append('{}\n')).toBe('error');
  });
});
