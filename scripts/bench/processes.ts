import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { lowestPriority } from '../../src/basics/priority';

/** The processes the benchmark starts: each a separate node process, so that none shares a core's event loop with the load generator. */

export const buildRoot = path.resolve(__dirname, '..', '..');

export interface Started {
  name: string;
  port: number;
  child: ChildProcess;
}

/** A free port: from BENCH_PORT_BASE upwards when set (a shared machine's own range), else one the kernel picks. */
let nextPort = Number(process.env.BENCH_PORT_BASE ?? 0);
export async function freePort(): Promise<number> {
  for (;;) {
    const wanted = nextPort === 0 ? 0 : nextPort++;
    const port = await new Promise<number | null>((resolve) => {
      const s = net.createServer();
      s.once('error', () => resolve(null));
      // On every address, as the service listens (HOST 0.0.0.0): a port held on one of them is not free.
      s.listen(wanted, () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    if (port !== null) return port;
    if (wanted === 0) throw new Error('no free port');
  }
}

/**
 * The V8 options the service is deployed with: those of `npm start` in the package.json of the
 * project `root` was built from (the systemd unit and IIS's web.config give the same). Without them
 * the bench measured a service with a young generation up to eight times larger than the one deployed.
 */
function serviceNodeArgs(root: string): string[] {
  // The project's root: above the build (.dev-build/) when built, the root itself when run from the sources.
  const project = fs.existsSync(path.join(root, 'package.json')) ? root : path.dirname(root);
  const start: string = JSON.parse(fs.readFileSync(path.join(project, 'package.json'), 'utf8')).scripts.start;
  const words = start.split(/\s+/);
  return words.slice(words.indexOf('node') + 1, words.indexOf('dist/src/main.js'));
}

/**
 * Starts the service (or a script that loads it) as it is deployed: with its project's start options,
 * then `nodeArgs`. `root`: the build to run, this one unless another is compared (compare.ts).
 */
export function startService(
  name: string,
  env: Record<string, string>,
  nodeArgs: readonly string[] = [],
  script = 'src/main.js',
  root = buildRoot,
): Promise<Started> {
  return startNode(name, path.resolve(root, script), [], env, [...serviceNodeArgs(root), ...nodeArgs]);
}

/** A stand-in for a host of its own starts at the lowest priority, as the service's shadow copier does; whether that is SCHED_IDLE here. */
const idlePrefix = lowestPriority();
export const canIdle = idlePrefix[0] === 'chrt';

/**
 * Starts a node script as a process of its own. `idle`: at the lowest priority (src/basics/priority.ts),
 * so that it takes only CPU nothing else wants: a stand-in for a host that runs on a machine of its own.
 */
export async function startNode(
  name: string,
  script: string,
  args: readonly string[],
  env: Record<string, string>,
  nodeArgs: readonly string[] = [],
  idle = false,
): Promise<Started> {
  const port = Number(env.PORT);
  // Its log lines go to a file, as a service's would to journald: written by the kernel, without
  // waiting on this process (busy driving the load) to read a pipe.
  const logFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'asmx-bench-log-')), `${name.replace(/\W+/g, '-')}.log`);
  const log = fs.openSync(logFile, 'w');
  const command = [process.execPath, ...nodeArgs, path.resolve(buildRoot, script), ...args];
  if (idle) command.unshift(...idlePrefix);
  const child = spawn(command[0], command.slice(1), {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', log, 'ipc'],
  });
  fs.closeSync(log);
  const tail = () => lastBytes(logFile, 2000);
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`${name} exited (${code}): ${tail()}`))));
  exited.catch(() => undefined);
  child.once('exit', () => fs.rmSync(path.dirname(logFile), { recursive: true, force: true }));
  await Promise.race([waitForHttp(port), exited]);
  return { name, port, child };
}

async function waitForHttp(port: number, timeoutMs = 30000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const req = http.get({ host: '127.0.0.1', port, path: '/' }, (res) => {
        res.resume();
        resolve(true);
      });
      req.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listening on ${port}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function stop(p: Started): Promise<void> {
  if (p.child.exitCode !== null) return;
  const gone = new Promise((r) => p.child.once('exit', r));
  p.child.kill('SIGTERM');
  const timer = setTimeout(() => p.child.kill('SIGKILL'), 5000);
  await gone;
  clearTimeout(timer);
}

/** Resident memory of a process and its descendants (a cluster's workers), in bytes; Linux only. */
export function treeRss(pid: number): number {
  let total = 0;
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    total += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
    for (const child of fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean))
      total += treeRss(Number(child));
  } catch {
    // Gone, or not Linux: counted as nothing.
  }
  return total;
}

/** Samples a process tree's RSS until stopped; the peak seen. */
export function watchRss(pid: number, everyMs = 100): () => number {
  let peak = treeRss(pid);
  const timer = setInterval(() => (peak = Math.max(peak, treeRss(pid))), everyMs);
  return () => {
    clearInterval(timer);
    return Math.max(peak, treeRss(pid));
  };
}

/** The end of a log file that may be gigabytes long after a soak: only the last `n` bytes are read. */
function lastBytes(file: string, n: number): string {
  const fd = fs.openSync(file, 'r');
  try {
    const size = fs.fstatSync(fd).size;
    const buf = Buffer.alloc(Math.min(n, size));
    fs.readSync(fd, buf, 0, buf.length, size - buf.length);
    return buf.toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}
