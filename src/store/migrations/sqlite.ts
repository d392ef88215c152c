import type Database from 'better-sqlite3';
import { SchemaVersionError } from './version';

/**
 * The SQLite schema, its version kept in PRAGMA user_version.
 */
export const MIGRATIONS: readonly string[] = [
  `
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
  // 2: SMS delivery. Times are ISO-8601 UTC text, which sorts as time. Rows queued before delivery
  // existed were never validated and their codes are stale: they are closed as failed, codes erased.
  `
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
];

function userVersion(db: Database.Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/**
 * Brings the schema up to date. The version is read again inside an IMMEDIATE transaction so that
 * the service and the import CLI opening the same file at once do not both apply a migration.
 */
export function migrate(db: Database.Database): number {
  const apply = db.transaction((): number => {
    const from = userVersion(db);
    if (from > MIGRATIONS.length) {
      throw new SchemaVersionError(from, MIGRATIONS.length);
    }
    for (let version = from; version < MIGRATIONS.length; version += 1) {
      db.exec(MIGRATIONS[version]!);
      // PRAGMA cannot take a bound parameter; the value is our own loop counter, not input.
      db.pragma(`user_version = ${version + 1}`);
    }
    return MIGRATIONS.length;
  });
  return apply.immediate();
}
