import '../../src/basics/supported-node';
import { fork } from 'node:child_process';
import net from 'node:net';
import { answerEnd, rawRequest } from './ceiling';
import { processCpuSeconds, treeCpuSeconds } from './cpu';
import { type Measured, percentile } from './load';
import type { BenchRequest } from './workloads';
import { type CommandSpec, parseCommandLine } from '../../src/basics/command-line';

export interface PacedOptions {
  /** Requests per second, spread evenly over each second. */
  rate: number;
  seconds: number;
  /** Keep-alive connections to spread them over: enough that one is nearly always free. */
  connections: number;
  /**
   * A process whose tree's CPU time is read (cpu.ts) just before the first request goes out and just
   * after the last answer: the server's CPU per request, without the load generator's start and end.
   */
  cpuOf?: number;
  /**
   * How long after the last answer the CPU time is read: work the answers set off is counted with
   * them (a shadowing service's copies, handed to its copier up to 50 ms later and settled after).
   */
  settleMs?: number;
}

export interface Paced extends Measured {
  /** Requests that found every connection busy and waited for one (their wait is not in the latency). */
  waited: number;
  /** Every answer's latency in ms, sorted (to pool rounds). */
  samples: number[];
  /** Requests answered. */
  answered: number;
  /** CPU seconds `cpuOf`'s tree used over the run (0 when no cpuOf). */
  cpuSeconds: number;
  /** The part of it `cpuOf` itself used, its children's left out (a shadowing service's copier). */
  ownCpuSeconds: number;
}

interface Connection {
  socket: net.Socket;
  busy: boolean;
  sentAt: number;
  got: Buffer;
}

const now = () => Number(process.hrtime.bigint()) / 1e6;

/**
 * A paced load, for latency below saturation: requests go out at evenly spaced moments (within the
 * millisecond of node's timers), each on a free keep-alive connection, and each answer's latency is
 * counted from the moment its request went out. autocannon's own rate limit sends each second's
 * quota as fast as it can and then waits, so at half load half of its requests meet a saturated
 * server; its latencies there are saturation's.
 *
 * Each run is a process of its own, with a young generation large enough that the collector does
 * not run during it: in the benchmark's process, with every earlier round's samples in its heap, its
 * pauses of up to 5 ms were timed as the service's, a few in every round, and moved the p99 by more
 * than the differences being measured.
 */
export async function pace(
  port: number,
  request: BenchRequest | readonly BenchRequest[],
  expectStatus: number,
  o: PacedOptions,
): Promise<Paced> {
  const child = fork(__filename, [], {
    execArgv: ['--min-semi-space-size=64', '--max-semi-space-size=64'],
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const result = new Promise<Paced>((resolve, reject) => {
    child.once('message', (m: Omit<Paced, 'samples'> & { samples: Float64Array }) => resolve({ ...m, samples: Array.from(m.samples) }));
    child.once('exit', (code) => reject(new Error(`the load generator exited (${code}) without a result`)));
  });
  child.send({ port, request, expectStatus, o });
  return result;
}

/** Forked by pace() above, not run by hand. */
const COMMAND = {
  usage: ['(forked by the benchmark: it takes its work as a message on its channel)'],
  summary: ["The benchmark's paced load generator, in a process of its own."],
  options: {},
} as const satisfies CommandSpec;

if (require.main === module) {
  const line = parseCommandLine(COMMAND, process.argv.slice(2));
  if (typeof line === 'number') process.exitCode = line;
  else {
    process.once(
      'message',
      ({
        port,
        request,
        expectStatus,
        o,
      }: {
        port: number;
        request: BenchRequest | BenchRequest[];
        expectStatus: number;
        o: PacedOptions;
      }) => void run(port, request, expectStatus, o).then((result) => process.send?.(result, () => process.exit(0))),
    );
  }
}

/**
 * `request`: one request sent again and again, or several sent in turn (AuthCode: a request repeated
 * within two minutes is refused as a duplicate, which costs less than one queued).
 */
async function run(
  port: number,
  request: BenchRequest | BenchRequest[],
  expectStatus: number,
  o: PacedOptions,
): Promise<Omit<Paced, 'samples'> & { samples: Float64Array }> {
  const requests = (Array.isArray(request) ? request : [request]).map((r) => rawRequest(port, r));
  let next = 0;
  const total = Math.round(o.rate * o.seconds);
  // Allocated once: the run itself allocates little more than node's reads.
  const times = new Float64Array(total);
  let answered = 0;
  let errors = 0;
  let waited = 0;
  /** Requests due that found no free connection: each goes out on the next one freed. */
  let queued = 0;
  const free: Connection[] = [];

  const send = (c: Connection) => {
    c.busy = true;
    c.sentAt = now();
    c.socket.write(requests[next++ % requests.length]);
  };
  const onAnswer = (c: Connection, status: number) => {
    times[answered++] = now() - c.sentAt;
    if (status !== expectStatus) errors++;
    c.busy = false;
    if (queued > 0) {
      queued--;
      send(c);
    } else free.push(c);
  };
  const connect = (): Promise<Connection> =>
    new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      const c: Connection = { socket, busy: false, sentAt: 0, got: Buffer.alloc(0) };
      socket.setNoDelay(true);
      socket.once('connect', () => {
        socket.off('error', reject);
        // A connection lost mid-run leaves its request unanswered: counted below as an error.
        socket.on('error', () => undefined);
        resolve(c);
      });
      socket.once('error', reject);
      socket.on('data', (d: Buffer) => {
        c.got = c.got.length === 0 ? d : Buffer.concat([c.got, d]);
        // One answer at a time per connection.
        const answer = answerEnd(c.got);
        if (answer === null) return;
        c.got = c.got.subarray(answer.end);
        onAnswer(c, Number(answer.head.slice(9, 12)));
      });
    });

  const all = await Promise.all(Array.from({ length: o.connections }, connect));
  free.push(...all);
  const cpuBefore = o.cpuOf === undefined ? 0 : treeCpuSeconds(o.cpuOf);
  const ownBefore = o.cpuOf === undefined ? 0 : processCpuSeconds(o.cpuOf);
  const start = now();
  let sent = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const t = now();
      for (; sent < total && start + (sent * 1000) / o.rate <= t; sent++) {
        const c = free.pop();
        if (c !== undefined) send(c);
        else {
          waited++;
          queued++;
        }
      }
      if (sent < total) setTimeout(tick, 1);
      else resolve();
    };
    tick();
  });
  // The last answers, then the connections closed.
  const deadline = now() + 30_000;
  while (all.some((c) => c.busy && !c.socket.destroyed) && now() < deadline) await new Promise((r) => setTimeout(r, 5));
  const elapsed = (now() - start) / 1000;
  if (o.settleMs !== undefined) await new Promise((r) => setTimeout(r, o.settleMs));
  const cpuSeconds = o.cpuOf === undefined ? 0 : treeCpuSeconds(o.cpuOf) - cpuBefore;
  const ownCpuSeconds = o.cpuOf === undefined ? 0 : processCpuSeconds(o.cpuOf) - ownBefore;
  for (const c of all) {
    if (c.busy) errors++;
    c.socket.destroy();
  }
  const samples = times.subarray(0, answered).sort();
  return {
    rps: answered / elapsed,
    p50: percentile(samples, 0.5),
    p99: percentile(samples, 0.99),
    errors,
    waited,
    samples,
    answered,
    cpuSeconds,
    ownCpuSeconds,
  };
}
