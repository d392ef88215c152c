import type Database from 'better-sqlite3';
import { log } from '../../basics/log';
import { type Migration, oldestCompatible, schemaProblem, SchemaVersionError } from './version';

/**
 * The SQLite schema, its version kept in PRAGMA user_version; the oldest program version that can
 * still run on it in schema_compat (see version.ts). To change the schema, append an entry.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    additive: false,
    sql: `
  CREATE TABLE students (
    school_base_url TEXT NOT NULL,
    id_student      TEXT NOT NULL,
    fullName        TEXT NOT NULL,
    id_device       TEXT NOT NULL,
    ShowActive      TEXT NOT NULL,
    PRIMARY KEY (school_base_url, id_student)
  );
  -- GetStudentSchool: WHERE school_base_url = ? AND ShowActive = ? ORDER BY id_student, without a sort step.
  CREATE INDEX students_by_school_active ON students (school_base_url, ShowActive, id_student);

  CREATE TABLE devices (
    id_device TEXT PRIMARY KEY,
    token     TEXT NOT NULL
  );

  -- code and phone are nullable: SOAP callers may omit them and the legacy service accepted that.
  CREATE TABLE auth_code_outbox (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    code         TEXT,
    phone        TEXT,
    created_at   TEXT NOT NULL,
    delivered_at TEXT
  );
  CREATE INDEX auth_code_outbox_pending ON auth_code_outbox (id) WHERE delivered_at IS NULL;
  `,
  },
  // 2: SMS delivery. Times are ISO-8601 UTC text, which sorts as time. Rows queued before delivery
  // existed were never validated and their codes are stale: they are closed as failed, codes erased.
  {
    additive: false,
    sql: `
  ALTER TABLE auth_code_outbox ADD COLUMN status TEXT NOT NULL DEFAULT 'pending';
  ALTER TABLE auth_code_outbox ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE auth_code_outbox ADD COLUMN next_attempt_at TEXT;
  ALTER TABLE auth_code_outbox ADD COLUMN lease_owner TEXT;
  ALTER TABLE auth_code_outbox ADD COLUMN lease_until TEXT;
  ALTER TABLE auth_code_outbox ADD COLUMN last_error TEXT;
  ALTER TABLE auth_code_outbox ADD COLUMN failed_at TEXT;
  UPDATE auth_code_outbox SET status = 'delivered', code = NULL WHERE delivered_at IS NOT NULL;
  UPDATE auth_code_outbox SET status = 'failed', code = NULL, failed_at = created_at,
    last_error = 'queued before SMS delivery existed; never sent' WHERE delivered_at IS NULL;
  UPDATE auth_code_outbox SET next_attempt_at = created_at;
  DROP INDEX auth_code_outbox_pending;
  CREATE INDEX auth_code_outbox_due ON auth_code_outbox (status, next_attempt_at);
  `,
  },
  // 3: a send's start, recorded before the provider is called, so that a resend after a lost answer is
  // known; and the 'expired' status (a text value, no change of type). Older programs ignore both.
  {
    additive: true,
    sql: `
  ALTER TABLE auth_code_outbox ADD COLUMN send_started_at TEXT;
  `,
  },
  // 4: the SMS limits' windows (per phone, per address, the duplicate mark, the global budgets), kept
  // in the store and changed in the transaction that queues the AuthCode (outbox.ts): they survive
  // restarts and kills and are shared by every process on the file. Keys are hashes, never a phone,
  // code or address. Older programs ignore the table (they keep their own counters).
  {
    additive: true,
    sql: `
  CREATE TABLE sms_limit_windows (
    key     TEXT PRIMARY KEY,
    hits    INTEGER NOT NULL,
    ends_at TEXT NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX sms_limit_windows_ends ON sms_limit_windows (ends_at);
  `,
  },
  // 5: readiness's heartbeat (store/health.ts): one row each probe updates and commits, the proof that
  // the store takes writes. Older programs ignore it.
  {
    additive: true,
    sql: `
  CREATE TABLE store_heartbeat (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    beats      INTEGER NOT NULL,
    written_at TEXT NOT NULL
  );
  `,
  },
  // 6: shadow traffic's totals, the cut-over verdict's counts across restarts (one row, added to as the
  // copier's results settle: shadow/mirror.ts). Older programs ignore it.
  {
    additive: true,
    sql: `
  CREATE TABLE shadow_totals (
    id               INTEGER PRIMARY KEY CHECK (id = 1),
    since            TEXT,
    compared         INTEGER NOT NULL,
    real_differences INTEGER NOT NULL,
    noise            INTEGER NOT NULL
  );
  `,
  },
];

/** The schema's version and the oldest program version it accepts (null: not recorded). */
export function schemaState(db: Database.Database): { version: number; oldest: number | null } {
  const version = db.pragma('user_version', { simple: true }) as number;
  const hasCompat = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_compat'").get() !== undefined;
  const row = hasCompat
    ? (db.prepare('SELECT oldest_version AS oldest FROM schema_compat').get() as { oldest: number } | undefined)
    : undefined;
  return { version, oldest: row?.oldest ?? null };
}

/**
 * Brings the schema up to date, or with `apply` false only checks that this program can run on it.
 * A schema already current (or newer and compatible) is only read, so starting never waits for a
 * writer's lock. Otherwise the version is read again inside an IMMEDIATE transaction so that the
 * service and the import CLI opening the same file at once do not both apply a migration.
 * `list` is for tests playing a newer program.
 */
export function migrate(db: Database.Database, apply = true, list: readonly Migration[] = MIGRATIONS): number {
  const target = oldestCompatible(list);
  const settled = (state: { version: number; oldest: number | null }): boolean => {
    if (state.version > list.length) {
      const problem = schemaProblem(state.version, state.oldest, list.length);
      if (problem !== null) throw new SchemaVersionError(problem);
      return true;
    }
    return state.version === list.length && (state.oldest === target || !apply);
  };
  if (settled(schemaState(db))) return list.length;
  if (!apply) throw new SchemaVersionError(schemaProblem(schemaState(db).version, null, list.length)!);
  const run = db.transaction((): number | null => {
    const state = schemaState(db);
    if (settled(state)) return null;
    for (let version = state.version; version < list.length; version += 1) {
      db.exec(list[version]!.sql);
      // PRAGMA cannot take a bound parameter; the value is our own loop counter, not input.
      db.pragma(`user_version = ${version + 1}`);
    }
    db.exec('CREATE TABLE IF NOT EXISTS schema_compat (oldest_version INTEGER NOT NULL); DELETE FROM schema_compat');
    db.prepare('INSERT INTO schema_compat (oldest_version) VALUES (?)').run(target);
    return state.version;
  });
  const from = run.immediate();
  if (from !== null) log.info('schema migrated', { from, to: list.length, oldestCompatible: target });
  return list.length;
}
