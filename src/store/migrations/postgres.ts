import type { PoolClient } from 'pg';
import { SchemaVersionError } from './version';

/**
 * The PostgreSQL schema, its version kept in schema_version. The same tables as SQLite's, with
 * COLLATE "C" on the text the service compares or sorts: byte order, as SQLite's BINARY, whatever
 * the database's locale, so both stores answer GetStudentSchool in the same order.
 */
export const PG_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE students (
    school_base_url text COLLATE "C" NOT NULL,
    id_student      text COLLATE "C" NOT NULL,
    "fullName"      text NOT NULL,
    id_device       text NOT NULL,
    "ShowActive"    text COLLATE "C" NOT NULL,
    PRIMARY KEY (school_base_url, id_student)
  );
  CREATE INDEX students_by_school_active ON students (school_base_url, "ShowActive", id_student);

  CREATE TABLE devices (
    id_device text COLLATE "C" PRIMARY KEY,
    token     text NOT NULL
  );

  CREATE TABLE auth_code_outbox (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    code         text,
    phone        text,
    created_at   timestamptz NOT NULL,
    delivered_at timestamptz
  );
  CREATE INDEX auth_code_outbox_pending ON auth_code_outbox (id) WHERE delivered_at IS NULL;
  `,
  // 2: SMS delivery, as SQLite's migration 2.
  `
  ALTER TABLE auth_code_outbox
    ADD COLUMN status text NOT NULL DEFAULT 'pending',
    ADD COLUMN attempts integer NOT NULL DEFAULT 0,
    ADD COLUMN next_attempt_at timestamptz,
    ADD COLUMN lease_owner text,
    ADD COLUMN lease_until timestamptz,
    ADD COLUMN last_error text,
    ADD COLUMN failed_at timestamptz;
  UPDATE auth_code_outbox SET status = 'delivered', code = NULL WHERE delivered_at IS NOT NULL;
  UPDATE auth_code_outbox SET status = 'failed', code = NULL, failed_at = created_at,
    last_error = 'queued before SMS delivery existed; never sent' WHERE delivered_at IS NULL;
  UPDATE auth_code_outbox SET next_attempt_at = created_at;
  DROP INDEX auth_code_outbox_pending;
  CREATE INDEX auth_code_outbox_due ON auth_code_outbox (status, next_attempt_at);
  `,
];

/**
 * Brings the schema up to date inside one transaction holding an advisory lock keyed on the
 * schema's name, so instances starting at the same moment apply each migration once: the others
 * wait, then find nothing left to do. PostgreSQL's DDL is transactional, so a failure leaves nothing.
 */
export async function migratePostgres(client: PoolClient): Promise<number> {
  await client.query('BEGIN');
  try {
    await client.query("SELECT pg_advisory_xact_lock(hashtext('student-info:' || current_schema()))");
    await client.query('CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)');
    const { rows } = await client.query<{ version: number }>('SELECT max(version) AS version FROM schema_version');
    const from = rows[0]?.version ?? 0;
    if (from > PG_MIGRATIONS.length) throw new SchemaVersionError(from, PG_MIGRATIONS.length);
    for (let version = from; version < PG_MIGRATIONS.length; version += 1) {
      await client.query(PG_MIGRATIONS[version]!);
      await client.query('INSERT INTO schema_version (version) VALUES ($1)', [version + 1]);
    }
    await client.query('COMMIT');
    return PG_MIGRATIONS.length;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}
