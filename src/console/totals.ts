import fs from 'node:fs';
import path from 'node:path';
import { log } from '../basics/log';
import { type Sample, total } from './prom-text';

/** What the verdict line counts, since the first comparison. */
export interface ShadowTotals {
  /** When the first request was compared (ISO), or null before any. */
  since: string | null;
  compared: number;
  real: number;
  noise: number;
}

const OUTCOMES = { match: 'compared', difference: 'real', noise: 'noise' } as const;
/** Written at most this often: a few bytes, but not a write per page view. */
const SAVE_MS = 10_000;

/** The totals file beside the differences log: `shadow-differences.jsonl` keeps its totals in `shadow-differences-totals.json`. */
export function totalsFile(shadowLog: string): string {
  const ext = path.extname(shadowLog);
  return path.join(path.dirname(shadowLog), `${path.basename(shadowLog, ext)}-totals.json`);
}

/**
 * The verdict's counts, kept across restarts: the metrics start from zero with each process, and the
 * differences log holds the differences only, not how many requests matched. So the counts are
 * added to a small JSON file beside the log (SHADOW_LOG), rewritten whole (a temporary file renamed
 * over it) at most every SAVE_MS; without a log they last as long as the process. Deleting the file
 * starts the count again, e.g. once a real difference has been fixed.
 */
export class Totals {
  private readonly last = new Map<string, number>();
  private savedAt = 0;
  private dirty = false;
  readonly current: ShadowTotals;

  constructor(private readonly file: string | null) {
    this.current = { since: null, compared: 0, real: 0, noise: 0, ...(file === null ? {} : read(file)) };
  }

  update(samples: readonly Sample[], now: number): void {
    for (const [outcome, field] of Object.entries(OUTCOMES)) {
      const value = total(samples, 'asmx_shadow_exchanges_total', { outcome });
      // This process's counters start at 0; a sum that went down lost a replaced worker's counts.
      const grew = value - (this.last.get(outcome) ?? 0);
      this.last.set(outcome, value);
      if (grew <= 0) continue;
      this.current[field] += grew;
      if (field !== 'compared') this.current.compared += grew;
      this.current.since ??= new Date(now).toISOString();
      this.dirty = true;
    }
    if (this.dirty && now - this.savedAt >= SAVE_MS) this.save(now);
  }

  save(now = Date.now()): void {
    if (this.file === null || !this.dirty) return;
    this.savedAt = now;
    this.dirty = false;
    const tmp = `${this.file}.${process.pid}.tmp`;
    try {
      fs.mkdirSync(path.dirname(path.resolve(this.file)), { recursive: true });
      fs.writeFileSync(tmp, `${JSON.stringify(this.current)}\n`);
      fs.renameSync(tmp, this.file);
    } catch (error) {
      log.warn('console: shadow totals not saved; they last until the process ends', { file: this.file, error });
    }
  }
}

function read(file: string): Partial<ShadowTotals> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return {};
  }
  try {
    const t = JSON.parse(text) as Partial<ShadowTotals>;
    const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0);
    const since = typeof t.since === 'string' && !Number.isNaN(Date.parse(t.since)) ? t.since : null;
    return { since, compared: n(t.compared), real: n(t.real), noise: n(t.noise) };
  } catch (error) {
    log.warn('console: shadow totals unreadable; counting from zero', { file, error });
    return {};
  }
}
