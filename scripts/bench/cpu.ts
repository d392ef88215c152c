/**
 * CPU time of a process tree from /proc, the benchmark's instrument for issue 24. On a shared 2-core
 * machine req/s and p99 of identical servers differ by 50% from one round to the next; the CPU time a
 * server spends per request answered, under a load that never saturates it, moves far less: it does
 * not count the time the server waited for a core.
 *
 * A process's utime and stime (fields 14 and 15 of /proc/PID/stat) cover all its threads (libuv's
 * pool, V8's collector threads), in clock ticks; its threads' schedstat gives the same to the
 * nanosecond; cutime and cstime (16 and 17) cover its children that have ended and been waited for.
 * A tree's CPU is that of each living process plus its ended children's: a cluster's workers are
 * counted, and a worker that ended mid-round still is.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

/** Clock ticks of a process's own CPU (user + system) and of its waited-for children's. */
export interface StatTicks {
  own: number;
  children: number;
}

/**
 * Parses /proc/PID/stat. The second field, the command in parentheses, may itself hold spaces and
 * parentheses, so the fields are counted from the last ')'.
 */
export function parseStat(text: string): StatTicks {
  const close = text.lastIndexOf(')');
  if (close === -1) throw new Error(`not a /proc/PID/stat line: ${text.slice(0, 80)}`);
  // After ')': field 3 (state) onwards, so field N is at index N - 3.
  const f = text
    .slice(close + 2)
    .trim()
    .split(/\s+/);
  const at = (n: number) => {
    const v = Number(f[n - 3]);
    if (!Number.isFinite(v)) throw new Error(`/proc/PID/stat: field ${n} is not a number`);
    return v;
  };
  return { own: at(14) + at(15), children: at(16) + at(17) };
}

/** The pids /proc/PID/task/*\/children lists (threads can each have forked): a space-separated list per thread. */
export function parseChildren(lists: readonly string[]): number[] {
  return [...new Set(lists.flatMap((l) => l.split(/\s+/).filter(Boolean).map(Number)))];
}

const read = (file: string) => fs.readFileSync(file, 'utf8');

/** Clock ticks per second (USER_HZ): 100 on nearly every Linux, asked of getconf to be sure. */
export const ticksPerSecond: number = (() => {
  try {
    const n = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isInteger(n) && n > 0 ? n : 100;
  } catch {
    return 100;
  }
})();

/** The pid and its living descendants. */
export function treePids(pid: number): number[] {
  const out = [pid];
  for (let i = 0; i < out.length; i++) {
    let tasks: string[];
    try {
      tasks = fs.readdirSync(`/proc/${out[i]}/task`);
    } catch {
      continue; // gone meanwhile
    }
    const lists: string[] = [];
    for (const t of tasks) {
      try {
        lists.push(read(`/proc/${out[i]}/task/${t}/children`));
      } catch {
        // a thread gone meanwhile
      }
    }
    out.push(...parseChildren(lists));
  }
  return out;
}

/** The first field of /proc/PID/task/TID/schedstat: nanoseconds the thread has run on a CPU. */
export function parseSchedstat(text: string): number {
  const m = /^\s*(\d+)/.exec(text);
  const ns = Number(m?.[1]);
  if (m === null || !Number.isFinite(ns)) throw new Error(`not a schedstat line: ${text.slice(0, 80)}`);
  return ns;
}

/**
 * A process's own CPU seconds: the sum of its threads' schedstat, to the nanosecond, where the
 * kernel keeps it; else utime + stime, in clock ticks (10 ms here: a round of a 5,000-student roster's
 * few hundred requests was known only to 5 to 10% so). A thread ended meanwhile takes its time out
 * of the sum: node's threads (libuv's pool, V8's) live as long as the process.
 */
function ownSeconds(pid: number, stat: StatTicks): number {
  try {
    let ns = 0;
    for (const t of fs.readdirSync(`/proc/${pid}/task`)) ns += parseSchedstat(read(`/proc/${pid}/task/${t}/schedstat`));
    return ns / 1e9;
  } catch {
    return stat.own / ticksPerSecond;
  }
}

/** The CPU seconds one process (all its threads, none of its children) has used so far; 0 once it is gone. */
export function processCpuSeconds(pid: number): number {
  try {
    return ownSeconds(pid, parseStat(read(`/proc/${pid}/stat`)));
  } catch {
    return 0;
  }
}

/**
 * The CPU seconds a process tree has used so far: each living process's own, plus the ended children
 * each has waited for (in clock ticks: the kernel keeps no finer count of them). A process that ends
 * between two readings and is waited for moves from one term to the other, so differences of two
 * readings stay right.
 */
export function treeCpuSeconds(pid: number): number {
  let seconds = 0;
  for (const p of treePids(pid)) {
    try {
      const s = parseStat(read(`/proc/${p}/stat`));
      seconds += ownSeconds(p, s) + s.children / ticksPerSecond;
    } catch {
      // gone meanwhile: its time is in its parent's children's now
    }
  }
  return seconds;
}

/** Whether /proc can be read here (Linux). */
export const hasProc = (): boolean => fs.existsSync(`/proc/${process.pid}/stat`);
