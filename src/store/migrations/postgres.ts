import type { PoolClient } from 'pg';
import { log } from '../../basics/log';
import { type Migration, oldestCompatible, schemaProblem, SchemaVersionError } from './version';

/**
 * The PostgreSQL schema, its version kept in schema_version. The same tables as SQLite's, with
 * COLLATE "C" on the text the service compares or sorts: byte order, as SQLite's BINARY, whatever
 * the database's locale, so both stores answer GetStudentSchool in the same order.
 */
export const PG_MIGRATIONS: readonly Migration[] = [
  {
    additive: false,
    sql: `
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
  },
  // 2: SMS delivery, as SQLite's migration 2.
  {
    additive: false,
    sql: `
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
  },
  // 3: a send's start, recorded before the provider is called, so that a resend after a lost answer is
  // known; and the 'expired' status (a text value, no change of type). Older programs ignore both.
  {
    additive: true,
    sql: `
  ALTER TABLE auth_code_outbox ADD COLUMN send_started_at timestamptz;
  `,
  },
  // 4: every statement that changes students, whoever runs it (an import on any instance, another
  // school system, psql), notifies at its commit, so that each instance can keep the rosters it read
  // (pg-changes.ts). ALWAYS: also under session_replication_role = replica (logical replication's
  // apply). Older programs ignore the notifications. SQLite needs none: its data_version does this.
  {
    additive: true,
    sql: `
  CREATE FUNCTION students_changed() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM pg_notify('student_info_changed', TG_TABLE_SCHEMA);
    RETURN NULL;
  END $$;
  CREATE TRIGGER students_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON students
    FOR EACH STATEMENT EXECUTE FUNCTION students_changed();
  ALTER TABLE students ENABLE ALWAYS TRIGGER students_changed;
  `,
  },
  // 5: the SMS limits' windows, as SQLite's migration 4.
  {
    additive: true,
    sql: `
  CREATE TABLE sms_limit_windows (
    key     text COLLATE "C" PRIMARY KEY,
    hits    integer NOT NULL,
    ends_at timestamptz NOT NULL
  );
  CREATE INDEX sms_limit_windows_ends ON sms_limit_windows (ends_at);
  `,
  },
  // 6: readiness's heartbeat, as SQLite's migration 5.
  {
    additive: true,
    sql: `
  CREATE TABLE store_heartbeat (
    id         integer PRIMARY KEY CHECK (id = 1),
    beats      bigint NOT NULL,
    written_at timestamptz NOT NULL
  );
  `,
  },
  // 6: shadow traffic's totals, the cut-over verdict's counts across restarts (as in SQLite's).
  {
    additive: true,
    sql: `
  CREATE TABLE shadow_totals (
    id               integer PRIMARY KEY CHECK (id = 1),
    since            timestamptz,
    compared         bigint NOT NULL,
    real_differences bigint NOT NULL,
    noise            bigint NOT NULL
  );
  `,
  },
];

type Queryable = Pick<PoolClient, 'query'>;

/** The schema's version (0: none) and the oldest program version it accepts (null: not recorded). */
export async function pgSchemaState(client: Queryable): Promise<{ version: number; oldest: number | null }> {
  const tables = await client.query<{ versions: boolean; compat: boolean }>(
    "SELECT to_regclass('schema_version') IS NOT NULL AS versions, to_regclass('schema_compat') IS NOT NULL AS compat",
  );
  const { versions, compat } = tables.rows[0]!;
  const version = versions
    ? ((await client.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_version')).rows[0]?.v ?? 0)
    : 0;
  const oldest = compat ? ((await client.query<{ o: number }>('SELECT oldest_version AS o FROM schema_compat')).rows[0]?.o ?? null) : null;
  return { version, oldest };
}

/**
 * Brings the schema up to date inside one transaction holding an advisory lock keyed on the
 * schema's name, so instances starting at the same moment apply each migration once: the others
 * wait, then find nothing left to do. PostgreSQL's DDL is transactional, so a failure leaves nothing.
 * With `apply` false (a cluster worker) it only checks that this program can run on the schema.
 * `list` is for tests playing a newer program.
 */
export async function migratePostgres(client: Queryable, apply = true, list: readonly Migration[] = PG_MIGRATIONS): Promise<number> {
  const known = list.length;
  const target = oldestCompatible(list);
  if (!apply) {
    const { version, oldest } = await pgSchemaState(client);
    const problem = schemaProblem(version, oldest, known);
    if (problem !== null) throw new SchemaVersionError(problem);
    return known;
  }
  let migrated: number | null = null;
  await client.query('BEGIN');
  try {
    await client.query("SELECT pg_advisory_xact_lock(hashtext('student-info:' || current_schema()))");
    await client.query('CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)');
    const { version: from, oldest } = await pgSchemaState(client);
    if (from > known) {
      const problem = schemaProblem(from, oldest, known);
      if (problem !== null) throw new SchemaVersionError(problem);
    } else {
      for (let version = from; version < known; version += 1) {
        await client.query(list[version]!.sql);
        await client.query('INSERT INTO schema_version (version) VALUES ($1)', [version + 1]);
      }
      if (oldest !== target || from < known) {
        await client.query('CREATE TABLE IF NOT EXISTS schema_compat (oldest_version integer NOT NULL)');
        await client.query('DELETE FROM schema_compat');
        await client.query('INSERT INTO schema_compat (oldest_version) VALUES ($1)', [target]);
        migrated = from;
      }
    }
    await client.query('COMMIT');
    if (migrated !== null) log.info('schema migrated', { from: migrated, to: known, oldestCompatible: target });
    return known;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}
