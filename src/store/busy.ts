import { setTimeout as sleep } from 'node:timers/promises';
import type Database from 'better-sqlite3';

/**
 * How long a statement keeps trying for a lock another connection holds (an import's batch,
 * another worker's AuthCode, a dispatcher's claim) before its SQLITE_BUSY error surfaces.
 */
export const LOCK_WAIT_LIMIT_MS = 5000;
/** The longest pause between two tries: a lock held for a batch of ~20 ms is seen free within this. */
const MAX_STEP_MS = 8;

export type LockWaitOutcome = 'waited' | 'gave_up';

let observer: (outcome: LockWaitOutcome) => void = () => undefined;

/** Hears each statement that met a held lock: the metrics module counts them (src/app/metrics.ts). */
export function onLockWait(listener: (outcome: LockWaitOutcome) => void): void {
  observer = listener;
}

/** Another connection holds the lock this statement needs (SQLITE_BUSY and its extended codes). */
export function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/**
 * Runs `fn` (one whole transaction, so a retry repeats all of it) on a connection whose
 * busy_timeout is 0. better-sqlite3 is synchronous: with SQLite's own busy timeout a statement
 * meeting a held lock would sleep inside the event loop and every request of the process would wait
 * with it. Here a busy statement fails at once and is tried again from a timer, 1, 2, 4 then every
 * 8 ms with jitter (so several waiting workers do not retry in step), until `limitMs` has passed;
 * then the last SQLITE_BUSY error is thrown, which the bindings answer as any store failure.
 * Unlocked, `fn` runs at once, before this returns.
 */
export async function whenUnlocked<T>(fn: () => T, limitMs = LOCK_WAIT_LIMIT_MS): Promise<T> {
  try {
    return fn();
  } catch (err) {
    if (!isBusy(err)) throw err;
  }
  const started = Date.now();
  for (let step = 1; ; step = Math.min(step * 2, MAX_STEP_MS)) {
    const left = limitMs - (Date.now() - started);
    await sleep(Math.max(0, Math.min(step, left)) + Math.random() * step * 0.5);
    try {
      const result = fn();
      observer('waited');
      return result;
    } catch (err) {
      if (!isBusy(err)) throw err;
      if (Date.now() - started >= limitMs) {
        observer('gave_up');
        throw err;
      }
    }
  }
}

/** A connection's statements, each prepared once, run through whenUnlocked: the service's and the import's. */
export function unlockedStatements(db: Database.Database) {
  const statements = new Map<string, Database.Statement>();
  const prepared = (sql: string): Database.Statement => statements.get(sql) ?? statements.set(sql, db.prepare(sql)).get(sql)!;
  return {
    prepared,
    run: (sql: string, params: readonly unknown[] = []) => whenUnlocked(() => prepared(sql).run(...params).changes),
    all: <T>(sql: string, params: readonly unknown[] = []) => whenUnlocked(() => prepared(sql).all(...params) as T[]),
  };
}
