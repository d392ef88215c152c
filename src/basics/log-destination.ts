import pino from 'pino';
import type { PrettyOptions } from 'pino-pretty';

/**
 * Where log lines go: stderr, as pino-pretty's lines on a terminal, else JSON lines written
 * asynchronously in batches. What waits to be written is bounded (MAX_LOG_BUFFER_BYTES): a stderr that
 * takes no writes (a stalled journald, a pipe nobody reads) would otherwise keep every request line
 * in memory, so each client's request would grow the process until it ran out. Past the bound a line
 * is dropped and counted (the metrics read `droppedLogLines`), and once stderr takes writes again
 * one line says how many went.
 */

/**
 * Writes to a pipe or file are asynchronous and batched: lines gather until BATCH_BYTES or
 * BATCH_MS have passed, so a busy service makes one write for many request lines rather than one
 * per request (that write, through libuv's thread pool, was 7% of a small request's CPU). A line is
 * at most BATCH_MS late, and pino writes what is pending synchronously when the process exits
 * (process.exit included), so a last line before a stop is not lost.
 */
const BATCH_BYTES = 8192;
const BATCH_MS = 25;
/** MAX_LOG_BUFFER_BYTES's default (config/index.ts): some 50,000 request lines, a few minutes of a busy service. */
export const DEFAULT_LOG_BUFFER_BYTES = 16 * 1024 * 1024;

/** The part of sonic-boom (pino.destination) used here: its bound is read at each write, so it can be set after the start. */
type Batched = ReturnType<typeof pino.destination> & { maxLength: number };

/** pino-pretty for a terminal, loaded only there: it is some tens of milliseconds of a start. */
const pretty = (options: PrettyOptions): pino.DestinationStream => (require('pino-pretty') as typeof import('pino-pretty')).build(options);

const batched: Batched | null = process.stderr.isTTY
  ? null
  : (pino.destination({
      dest: 2,
      sync: false,
      minLength: BATCH_BYTES,
      periodicFlush: BATCH_MS,
      maxLength: DEFAULT_LOG_BUFFER_BYTES,
    }) as Batched);

/** A terminal is written synchronously: an operator watching it is never behind, and nothing waits. */
export const destination: pino.DestinationStream =
  batched ?? pretty({ destination: 2, sync: true, colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });

/** Lines dropped because MAX_LOG_BUFFER_BYTES were waiting for stderr, since the start. */
export const droppedLogLines = { count: 0 };

/** Dropped lines not yet told of, and who tells (log.ts, as a line of its own once stderr catches up). */
let untold = 0;
let tell: (dropped: number) => void = () => undefined;

export function tellDroppedLines(how: (dropped: number) => void): void {
  tell = how;
}

batched?.on('drop', () => {
  droppedLogLines.count += 1;
  untold += 1;
  if (untold > 1) return;
  batched.once('drain', () => {
    const dropped = untold;
    untold = 0;
    tell(dropped);
  });
});

/** The bound on what waits for stderr, from the validated configuration (MAX_LOG_BUFFER_BYTES). */
export function setLogBufferBytes(bytes: number): void {
  if (batched !== null) batched.maxLength = bytes;
}

/**
 * Writes out every line still batched, after any write in progress: a line written to stderr
 * directly once this has resolved comes after every log line before it. (pino writes what is left
 * when the process exits, which would be after such a line: a failed start's last line would not
 * be last.) Bounded: a stderr that takes no writes delays an exit by a second at most.
 */
export async function flushBatched(flush: (done: () => void) => void): Promise<void> {
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 1000);
    flush(() => {
      clearTimeout(timer);
      resolve();
    });
  });
  // Lines logged while the flush was under way.
  try {
    batched?.flushSync();
  } catch {
    // Nothing more can be done for them here; pino tries again at exit.
  }
}
