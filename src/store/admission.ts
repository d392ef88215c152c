import type { FullWindow, LimitCheck } from './store';

/** A statement with `?` parameters, run by the store's connection. */
export interface Statement {
  sql: string;
  params: unknown[];
}

/** A counter's window as stored: `hits` queued since it began, open until `endsAt` (epoch ms). */
interface Window {
  hits: number;
  endsAt: number;
}

/** What the store decided for one AuthCode. */
export interface Admission {
  /** null: queued. Else the first of its checks the request would have taken past its limit. */
  refusedBy: LimitCheck | null;
  /** Windows of its checks that are at their limit now: facts until then, which a cache may keep. */
  full: FullWindow[];
}

type Row = Record<string, unknown>;
const epoch = (v: unknown): number => (v instanceof Date ? v.getTime() : Date.parse(String(v)));
/** Rows in one upsert at most (3 parameters each). */
const MAX_WINDOW_ROWS = 64;

/**
 * The SQL of the limits' windows (table sms_limit_windows, migrations/). Reads and writes happen
 * only inside the connection's `exclusive` transaction, one admission at a time across every
 * process and instance on the database, so each write sets the values read plus this batch's hits.
 */
export const windowSql = (dialect: 'sqlite' | 'postgres') => ({
  // One statement, one parameter, whatever the number of keys: SQLite reads a JSON array, PostgreSQL an array.
  read: (keys: readonly string[]): Statement =>
    dialect === 'sqlite'
      ? {
          sql: 'SELECT key, hits, ends_at FROM sms_limit_windows WHERE key IN (SELECT value FROM json_each(?))',
          params: [JSON.stringify(keys)],
        }
      : { sql: 'SELECT key, hits, ends_at FROM sms_limit_windows WHERE key = ANY(?)', params: [[...keys]] },
  write: (rows: [key: string, w: Window][]): Statement[] => {
    const out: Statement[] = [];
    for (let i = 0; i < rows.length; i += MAX_WINDOW_ROWS) {
      const chunk = rows.slice(i, i + MAX_WINDOW_ROWS);
      out.push({
        sql: `INSERT INTO sms_limit_windows (key, hits, ends_at) VALUES ${chunk.map(() => '(?, ?, ?)').join(', ')}
          ON CONFLICT (key) DO UPDATE SET hits = excluded.hits, ends_at = excluded.ends_at`,
        params: chunk.flatMap(([key, w]) => [key, w.hits, new Date(w.endsAt).toISOString()]),
      });
    }
    return out;
  },
  // Ended windows count nothing; a batch of the oldest at a time (the index on ends_at).
  purge: 'DELETE FROM sms_limit_windows WHERE key IN (SELECT key FROM sms_limit_windows WHERE ends_at <= ? ORDER BY ends_at LIMIT ?)',
});

/**
 * Decides a batch of AuthCodes against the windows read for their keys, in arrival order, at `now`:
 * a request is queued only if every one of its checks has room (a window that has ended counts
 * nothing; a new one starts at this hit and lasts the check's windowMs), and only a queued request
 * counts, so a refused one changes nothing. Returns each request's admission and the windows to write.
 */
export function decide(
  checksOf: readonly (readonly LimitCheck[])[],
  rows: readonly Row[],
  now: number,
): { admissions: Admission[]; changed: [string, Window][] } {
  const windows = new Map<string, Window>();
  for (const r of rows) windows.set(String(r.key), { hits: Number(r.hits), endsAt: epoch(r.ends_at) });
  const open = (key: string): Window | null => {
    const w = windows.get(key);
    return w !== undefined && w.endsAt > now ? w : null;
  };
  const changed = new Map<string, Window>();
  const admissions = checksOf.map((checks): Admission => {
    const refusedBy = checks.find((c) => (open(c.key)?.hits ?? 0) + 1 > c.limit) ?? null;
    if (refusedBy !== null) {
      const w = open(refusedBy.key);
      return { refusedBy, full: w === null ? [] : [{ key: refusedBy.key, hits: w.hits, until: w.endsAt }] };
    }
    const full: FullWindow[] = [];
    for (const c of checks) {
      const before = open(c.key);
      const w = before === null ? { hits: 1, endsAt: now + c.windowMs } : { hits: before.hits + 1, endsAt: before.endsAt };
      windows.set(c.key, w);
      changed.set(c.key, w);
      if (w.hits >= c.limit) full.push({ key: c.key, hits: w.hits, until: w.endsAt });
    }
    return { refusedBy: null, full };
  });
  return { admissions, changed: [...changed] };
}
