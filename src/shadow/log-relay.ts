import { type LogLimits, type Outcome, openLogFile, PENDING_MAX, type Pen } from './log-file';

/**
 * The differences log of a cluster: the primary writes it for every worker, so that one process
 * keeps its sizes and rotates it (several processes appending to one file can each see room and
 * together pass the budget, and one renaming the file leaves the others writing to the old one).
 * A worker sends each line that passed its examples rule (its JSON, masked already) and hears
 * what became of it, for its own metrics: the counters stay where the others are, in the workers.
 */

/** A worker's line for the log, and the primary's answer (process/cluster-messages.ts carries them). */
export type LogLine = { type: 'shadow-log'; id: number; text: string };
export type LogWritten = { type: 'shadow-logged'; id: number; outcome: Outcome; bytes: number };

/** How long a stopping worker waits for the primary's answers: a primary that does not answer does not hold the stop. */
const CLOSE_WAIT_MS = 2000;

/** A worker's pen: `send` to the primary (false once it cannot); the worker hands the answers to `written`. */
export function relayToPrimary(send: (m: LogLine) => boolean): Pen & { written(m: LogWritten): void; gone(): void } {
  const waiting = new Map<number, { bytes: number; done: (o: Outcome) => void }>();
  let pending = 0;
  let next = 0;
  let bytes = 0;
  /** A stop waiting for the last answer. */
  let idle: (() => void) | null = null;
  const settle = (id: number, outcome: Outcome) => {
    const w = waiting.get(id);
    if (w === undefined) return;
    waiting.delete(id);
    pending -= w.bytes;
    w.done(outcome);
    if (waiting.size === 0) idle?.();
  };
  return {
    append(text) {
      const size = Buffer.byteLength(text);
      // Held in this process until the primary answers: bounded as the file's own queue is.
      if (pending > 0 && pending + size > PENDING_MAX) return Promise.resolve('busy');
      const id = ++next;
      return new Promise((done) => {
        waiting.set(id, { bytes: size, done });
        pending += size;
        if (!send({ type: 'shadow-log', id, text })) settle(id, 'error');
      });
    },
    get bytes() {
      return bytes;
    },
    written(m) {
      bytes = m.bytes;
      settle(m.id, m.outcome);
    },
    gone() {
      for (const id of [...waiting.keys()]) settle(id, 'error');
    },
    async close() {
      if (waiting.size === 0) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([new Promise<void>((r) => (idle = r)), new Promise((r) => (timer = setTimeout(r, CLOSE_WAIT_MS)))]);
      clearTimeout(timer);
    },
  };
}

/** The primary's side: the one writer of the log for its workers, answering each line with its outcome and the log's size. */
export function writeForWorkers(file: string, limits: LogLimits): { take(m: LogLine, answer: (m: LogWritten) => void): void } {
  const pen = openLogFile(file, limits);
  return {
    take(m, answer) {
      void pen.append(m.text).then((outcome) => answer({ type: 'shadow-logged', id: m.id, outcome, bytes: pen.bytes }));
    },
  };
}
