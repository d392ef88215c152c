import { spawn } from 'node:child_process';
import { pairedRatio } from '../scripts/bench/compare';
import { parseChildren, parseStat, treeCpuSeconds, treePids } from '../scripts/bench/cpu';

/** The benchmark's CPU instrument: /proc/PID/stat read right, a process tree found, ratios paired by round. */

// A real line's shape (Linux proc(5)): pid (comm) state ppid ... utime(14) stime(15) cutime(16) cstime(17) ...
const line = (comm: string) => `4242 (${comm}) S 1 4242 4242 0 -1 4194560 1234 0 0 0 731 129 40 2 20 0 11 0 5000 1000000 20000 18446744073709551615\n`;

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
