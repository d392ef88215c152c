import fs, { type StatsFs } from 'node:fs';
import path from 'node:path';
import { makeDirectory } from '../basics/directory';
import { freeBytes } from '../basics/disk';
import { log } from '../basics/log';

/**
 * The differences log on disk, bounded twice, as journald bounds its journal: in total bytes, its
 * rotated files counted (SHADOW_LOG_MAX_BYTES, journald's SystemMaxUse; the oldest file goes, as
 * logrotate's `size` and `rotate`), and by the free space it leaves (SHADOW_LOG_KEEP_FREE,
 * SystemKeepFree): a line that would leave less is not written, so the log never takes the room
 * the store beside it needs. One writer per file: in a cluster the primary writes for every worker
 * (log-relay.ts), so the sizes it keeps are the file's.
 */

/** The log's files: the one written and three rotated out (FILE.1 the newest of those, FILE.3 the oldest), a quarter of the budget each. */
export const GENERATIONS = 4;

export const generation = (file: string, n: number): string => (n === 0 ? file : `${file}.${n}`);

/** The log's files that exist, oldest first: how a reader reads the whole log in order. */
export function logFiles(file: string): string[] {
  const out: string[] = [];
  for (let n = GENERATIONS - 1; n >= 0; n--) if (fs.existsSync(generation(file, n))) out.push(generation(file, n));
  return out;
}

/** What became of a line: written, or not for a reason (each a value of asmx_shadow_log_lines_total's `outcome`). */
export type Outcome = 'written' | 'disk_floor' | 'budget' | 'busy' | 'error';

export interface LogLimits {
  maxBytes: number;
  /** Null: the default rule, keepFreeOf. */
  keepFree: number | null;
}

const MiB = 1024 * 1024;

/** SHADOW_LOG_KEEP_FREE, or unset the larger of 256 MiB and 5% of the file system (journald keeps 15%, at most 4 GiB: its journal is the disk's main writer, this log is not). */
export function keepFreeOf(keepFree: number | null, st: StatsFs): number {
  return keepFree ?? Math.max(256 * MiB, Math.ceil(st.blocks * st.bsize * 0.05));
}

/**
 * The budget's rule for a line of `line` bytes, the files being `sizes` bytes (the one written
 * first): refused when longer than a file may be; else whether the file written is rotated first
 * (it has lines and this one would take it past its share), the rotated files to delete then (by
 * their number after the rotation, the oldest first) so that all of them and the line fit the
 * budget, and the bytes that frees (the oldest file, replaced by a rotation, included).
 */
export function plan(
  sizes: readonly number[],
  line: number,
  maxBytes: number,
): 'budget' | { rotate: boolean; remove: number[]; freed: number } {
  const share = Math.floor(maxBytes / GENERATIONS);
  if (line > share) return 'budget';
  const rotate = sizes[0] > 0 && sizes[0] + line > share;
  const after = rotate ? [0, ...sizes.slice(0, GENERATIONS - 1)] : [...sizes];
  let freed = rotate ? (sizes[GENERATIONS - 1] ?? 0) : 0;
  let total = after.reduce((a, b) => a + b, 0);
  const remove: number[] = [];
  // Only a log from before the budget (or a smaller budget) can be over it: its oldest files go.
  for (let n = GENERATIONS - 1; n > 0 && total + line > maxBytes; n--) {
    if (after[n] === 0) continue;
    remove.push(n);
    freed += after[n];
    total -= after[n];
  }
  return { rotate, remove, freed };
}

/** Where the log's lines go: the file (this process writes it), or the process that writes it. */
export interface Pen {
  /** Appends one line (ending in a newline), as the budget and the floor allow; says what became of it. Never rejects. */
  append(text: string): Promise<Outcome>;
  /** The bytes of the log's files, as last known. */
  readonly bytes: number;
  /** Resolves once every line appended has been written or refused. */
  close(): Promise<void>;
}

/** Lines waiting for the disk at most: past this the disk is behind the differences, and a line is refused (`busy`) rather than held. */
export const PENDING_MAX = 4 * MiB;

const SAID: Record<Exclude<Outcome, 'written'>, string> = {
  disk_floor:
    'shadow differences log not written: its file system has less free than SHADOW_LOG_KEEP_FREE; differences are counted until there is room',
  budget: 'shadow differences log: a line longer than a quarter of SHADOW_LOG_MAX_BYTES is not written (counted)',
  busy: 'shadow differences log not written: the disk is behind the differences; they are counted until it catches up',
  error: 'shadow differences log cannot be written; differences are counted until it can',
};

class LogFile implements Pen {
  /** Bytes of each file, the one written first. */
  private readonly sizes: number[] = [];
  private readonly dir: string;
  private readonly queue: Array<{ text: string; bytes: number; done: (o: Outcome) => void }> = [];
  private pending = 0;
  private draining: Promise<void> | null = null;
  /** The last outcome, and the lines not written since the last one written: a change is logged, a line is not. */
  private state: Outcome = 'written';
  private missed = 0;

  constructor(
    private readonly file: string,
    private readonly limits: LogLimits,
  ) {
    this.dir = path.dirname(path.resolve(file));
    for (let n = 0; n < GENERATIONS; n++) this.sizes.push(sizeOf(generation(file, n)));
    try {
      makeDirectory(this.dir);
    } catch {
      // Each line then fails to be written, and says why once.
    }
  }

  get bytes(): number {
    return this.sizes.reduce((a, b) => a + b, 0);
  }

  append(text: string): Promise<Outcome> {
    const bytes = Buffer.byteLength(text);
    if (this.pending > 0 && this.pending + bytes > PENDING_MAX) return Promise.resolve(this.note('busy', {}));
    this.pending += bytes;
    return new Promise((done) => {
      this.queue.push({ text, bytes, done });
      this.draining ??= this.drain();
    });
  }

  async close(): Promise<void> {
    await this.draining;
  }

  /** One line at a time, in order: a rotation never races a write. */
  private async drain(): Promise<void> {
    for (let next = this.queue.shift(); next !== undefined; next = this.queue.shift()) {
      const [outcome, fields] = await this.put(next.text, next.bytes);
      this.pending -= next.bytes;
      next.done(this.note(outcome, fields));
    }
    this.draining = null;
  }

  private async put(text: string, bytes: number): Promise<[Outcome, Record<string, unknown>]> {
    try {
      // The file written is looked at again (2 µs): one deleted or emptied by hand counts as such.
      this.sizes[0] = sizeOf(this.file);
      const step = plan(this.sizes, bytes, this.limits.maxBytes);
      if (step === 'budget') return ['budget', { lineBytes: bytes, maxBytes: this.limits.maxBytes }];
      // Looked at before every line (statfs: 2.5 µs, against some hundreds for the line's JSON): the store beside it may have taken room since.
      const st = fs.statfsSync(this.dir);
      const free = freeBytes(st) + step.freed;
      const keep = keepFreeOf(this.limits.keepFree, st);
      if (free - bytes < keep) return ['disk_floor', { freeBytes: free, keepFreeBytes: keep }];
      if (step.rotate) this.rotate();
      for (const n of step.remove) {
        await fs.promises.rm(generation(this.file, n), { force: true });
        this.sizes[n] = 0;
      }
      await fs.promises.appendFile(this.file, text);
      this.sizes[0] += bytes;
      return ['written', {}];
    } catch (error) {
      return ['error', { error }];
    }
  }

  /** FILE.2 to FILE.3 (the oldest replaced), FILE.1 to FILE.2, FILE to FILE.1: the next line starts FILE again. */
  private rotate(): void {
    for (let n = GENERATIONS - 1; n > 0; n--) {
      const from = generation(this.file, n - 1);
      if (fs.existsSync(from)) fs.renameSync(from, generation(this.file, n));
      else fs.rmSync(generation(this.file, n), { force: true });
      this.sizes[n] = this.sizes[n - 1];
    }
    this.sizes[0] = 0;
  }

  private note(outcome: Outcome, fields: Record<string, unknown>): Outcome {
    if (outcome === 'written') {
      if (this.state !== 'written') log.info('shadow differences log written again', { file: this.file, notWritten: this.missed });
      this.missed = 0;
    } else {
      this.missed++;
      if (outcome !== this.state) log.warn(SAID[outcome], { file: this.file, ...fields });
    }
    this.state = outcome;
    return outcome;
  }
}

function sizeOf(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}

/** Each file's one writer in this process (several reports may name the same file: the tests' services do). */
const open = new Map<string, { pen: LogFile; users: number }>();

/** The log at `file`, written by this process within `limits` (the first opener's). */
export function openLogFile(file: string, limits: LogLimits): Pen {
  const key = path.resolve(file);
  const known = open.get(key) ?? { pen: new LogFile(file, limits), users: 0 };
  known.users++;
  open.set(key, known);
  let closed = false;
  return {
    append: (text) => known.pen.append(text),
    get bytes() {
      return known.pen.bytes;
    },
    async close() {
      if (closed) return;
      closed = true;
      if (--known.users === 0 && open.get(key) === known) open.delete(key);
      await known.pen.close();
    },
  };
}
