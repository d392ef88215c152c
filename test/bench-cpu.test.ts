import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pairedRatio } from '../scripts/bench/compare';
import { parseChildren, parseSchedstat, parseStat, treeCpuSeconds, treePids } from '../scripts/bench/cpu';
import { type CpuRow, pacedRates } from '../scripts/bench/cpu-table';
import { judgeCpu } from '../scripts/bench/judge';
import { publishRefusal } from '../scripts/bench/options';
import { WORKLOADS } from '../scripts/bench/workloads';

/** The benchmark's CPU instrument: /proc/PID/stat read right, a process tree found, ratios paired by round. */

// A real line's shape (Linux proc(5)): pid (comm) state ppid ... utime(14) stime(15) cutime(16) cstime(17) ...
const line = (comm: string) =>
  `4242 (${comm}) S 1 4242 4242 0 -1 4194560 1234 0 0 0 731 129 40 2 20 0 11 0 5000 1000000 20000 18446744073709551615\n`;

test('utime + stime, and the waited-for children, are fields 14 to 17', () => {
  expect(parseStat(line('node'))).toEqual({ own: 731 + 129, children: 40 + 2 });
});

test('a command holding spaces and parentheses does not shift the fields', () => {
  expect(parseStat(line('a) b (c) 9 9'))).toEqual({ own: 860, children: 42 });
});

test('a line that is not a stat line is refused, not read as zero', () => {
  expect(() => parseStat('nothing here')).toThrow(/not a \/proc/);
  expect(() => parseStat('1 (x) S 1 2')).toThrow(/field 14/);
});

test("a thread's schedstat: its first field, nanoseconds on a CPU", () => {
  expect(parseSchedstat('194084632 392704902 831\n')).toBe(194084632);
  expect(() => parseSchedstat('')).toThrow(/schedstat/);
});

test("each thread's children list is read, a pid listed twice counted once", () => {
  expect(parseChildren(['12 13 ', '', '13 14'])).toEqual([12, 13, 14]);
});

const linux = process.platform === 'linux' ? test : test.skip;
linux('a tree holds its living children, and its CPU time never goes back', async () => {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => undefined, 30000)'], { stdio: 'ignore' });
  try {
    await new Promise((r) => child.once('spawn', r));
    expect(treePids(process.pid)).toEqual(expect.arrayContaining([process.pid, child.pid]));
    const before = treeCpuSeconds(process.pid);
    expect(treeCpuSeconds(process.pid)).toBeGreaterThanOrEqual(before);
  } finally {
    child.kill();
  }
});

test('ratios pair the rounds: B over A, with their median, middle half and range', () => {
  const r = pairedRatio([100, 200, 100, 100, 100], [110, 200, 90, 120, 100]);
  expect(r).toEqual({ median: 1, q1: 1, q3: 1.1, min: 0.9, max: 1.2 });
});

/** A row of the CPU table: one workload's µs per request for one target. */
const row = (workload: string, target: string, kind: CpuRow['kind'], us: number): CpuRow => ({
  workload,
  title: workload,
  target,
  kind,
  rate: 100,
  us,
  rounds: [us],
  waited: 0,
  errors: 0,
  answered: 300,
});
const S = 'service, SQLite, 1 worker';

describe('the targets of issue 42, judged on CPU per request', () => {
  const P = 'service, PostgreSQL, 1 worker';
  const stores = [
    { name: 'SQLite', label: S },
    { name: 'PostgreSQL', label: P },
  ];
  const cpu: CpuRow[] = [
    row('token-soap11', S, 'service', 90),
    row('token-soap11', P, 'service', 150),
    row('token-soap11', 'node-soap + Express', 'node-soap', 200),
    row('token-soap11', 'ceiling', 'ceiling', 50),
    row('token-get', S, 'service', 100),
    row('token-get', P, 'service', 120),
    row('token-get', 'ceiling', 'ceiling', 30),
    ...[10, 500, 5000].flatMap((n) => [
      row(`school${n}-soap11`, S, 'service', 100 + n * 0.5),
      row(`school${n}-soap11`, P, 'service', 100 + n * (n === 5000 ? 0.8 : 0.5)),
    ]),
  ];
  const verdicts = judgeCpu(WORKLOADS, cpu, [], stores, []);
  const v = (target: string) => verdicts.find((x) => x.target === target);

  test('a ratio within its limit holds; one beyond says by how much it misses', () => {
    expect(v("SQLite: GetTokenDevice SOAP 1.1 CPU/request <= 0.8x node-soap's")).toEqual({
      target: expect.any(String),
      ok: true,
      measured: '0.45x (90 vs 200 us)',
    });
    expect(v("SQLite: GetTokenDevice SOAP 1.1 CPU/request <= 2x ceiling's")).toMatchObject({ ok: true, measured: '1.80x (90 vs 50 us)' });
    expect(v("PostgreSQL: GetTokenDevice SOAP 1.1 CPU/request <= 0.8x node-soap's")).toEqual({
      target: expect.any(String),
      ok: true,
      measured: '0.75x (150 vs 200 us)',
    });
    expect(v("PostgreSQL: GetTokenDevice SOAP 1.1 CPU/request <= 2x ceiling's")).toMatchObject({
      ok: false,
      measured: '3.00x, misses by 50% (150 vs 50 us)',
    });
    expect(v("SQLite: GetTokenDevice GET CPU/request <= 2x ceiling's")).toMatchObject({
      ok: false,
      measured: expect.stringMatching(/^3\.33x, misses by 67%/),
    });
  });

  test('PostgreSQL is held within 1.5x of SQLite on each workload', () => {
    expect(v("token-soap11: PostgreSQL CPU/request <= 1.5x SQLite's")).toMatchObject({ ok: false });
    expect(v("token-get: PostgreSQL CPU/request <= 1.5x SQLite's")).toMatchObject({ ok: true });
  });

  test('linear in students: the cost of a student from 500 to 5,000 against that from 10 to 500', () => {
    expect(
      v(
        "SQLite: GetStudentSchool soap11 CPU/request linear in students (us per student 500->5000 <= 1.25x 10->500, or the ceiling's 500->5000)",
      ),
    ).toMatchObject({ ok: true });
    // 0.5 µs a student to 500, then (4100 - 350) / 4500 = 0.83: 1.67x.
    expect(
      v(
        "PostgreSQL: GetStudentSchool soap11 CPU/request linear in students (us per student 500->5000 <= 1.25x 10->500, or the ceiling's 500->5000)",
      ),
    ).toMatchObject({ ok: false, measured: expect.stringMatching(/^1\.67x, misses by 33%/) });
  });

  test('a target with nothing measured for it is not judged', () => {
    expect(v("SQLite: AuthCode SOAP 1.1 CPU/request <= 1x node-soap's")).toBeUndefined();
    expect(v("SQLite: GetAboutUs SOAP 1.1 CPU/request <= 2x ceiling's")).toBeUndefined();
  });
});

test('the paced rate: one for all, a third of the slowest; on a roster node-soap is not waited for', () => {
  const targets = [
    { kind: 'service', max: 3000 },
    { kind: 'service', max: 2400 },
    { kind: 'ceiling', max: 9000 },
    { kind: 'node-soap', max: 30 },
  ] as const;
  expect(pacedRates(targets)).toEqual([10, 10, 10, 10]);
  expect(pacedRates(targets, true)).toEqual([800, 800, 800, 10]);
  expect(pacedRates([{ kind: 'service', max: 6 }])).toEqual([5]);
});

/** The linear-in-students verdict on SQLite for rosters of 10, 500 and 5,000 students: the service's and the ceiling's µs. */
function linearVerdict(binding: 'soap11' | 'get', service: readonly number[], ceiling: readonly number[]) {
  const cpu = [10, 500, 5000].flatMap((n, i) => [
    row(`school${n}-${binding}`, S, 'service', service[i]!),
    row(`school${n}-${binding}`, 'ceiling', 'ceiling', ceiling[i]!),
  ]);
  return judgeCpu(WORKLOADS, cpu, [], [{ name: 'SQLite', label: S }], [])[0];
}

test("a roster cost flat from 10 to 500 (cached) is held to the ceiling's cost of a student, not to nothing", () => {
  // The service: 300, 300, 1200 µs; the ceiling 0.2 µs a student (50, 148, 1048).
  // (1200 - 300) / 4500 = 0.2 µs a student: the ceiling's own.
  expect(linearVerdict('get', [300, 300, 1200], [50, 148, 1048])).toMatchObject({
    ok: true,
    measured: expect.stringMatching(/^1\.00x \(0\.000 then 0\.200 us per student, the ceiling 0\.200 from 500/),
  });
});

test("the ceiling's cost of a student is read over the range it is held to: flat to 500, then the socket's buffer outgrown", () => {
  // The run of 2026-11-28 (SOAP 1.1, SQLite): the ceiling 61, 61, 288 µs; the service 185, 195, 451.
  const ceiling = [61, 61, 288];
  // (451 - 195) / 4500 = 0.057 µs a student against the ceiling's (288 - 61) / 4500 = 0.050.
  expect(linearVerdict('soap11', [185, 195, 451], ceiling)).toMatchObject({
    ok: true,
    measured: expect.stringMatching(/^1\.13x \(0\.020 then 0\.057 us per student, the ceiling 0\.050 from 500 to 5000/),
  });
  // Twice the ceiling's cost a student past 500 is not linear: (650 - 195) / 4500 = 0.101.
  expect(linearVerdict('soap11', [185, 195, 650], ceiling)).toMatchObject({
    ok: false,
    measured: expect.stringMatching(/^2\.00x, misses by 60%/),
  });
});

test("a published run is the Node.js line .nvmrc names: another line's figures are refused in one line", () => {
  expect(publishRefusal('v24.21.0', '24\n')).toBeNull();
  expect(publishRefusal('v24.0.0', 'v24.1\n')).toBeNull();
  expect(publishRefusal('v22.12.0', '24\n')).toBe(
    "--publish runs on the Node.js line .nvmrc names (24), not v22.12.0: the published figures are that line's",
  );
  // The project's own .nvmrc is read when none is given.
  expect(publishRefusal(`v${fs.readFileSync(path.join(__dirname, '..', '.nvmrc'), 'utf8').trim()}.0.0`)).toBeNull();
});
