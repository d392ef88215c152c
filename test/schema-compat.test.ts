import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Client } from 'pg';
import { type Migration, MIGRATIONS, migrate, migratePostgres, oldestCompatible, PG_MIGRATIONS } from '../src/store/migrations';
import { openStore } from '../src/store/open';
import type { Store } from '../src/store/store';
import { TEST_STORE, testDatabase, type TestDatabase } from './helpers/postgres';
import { queued } from './helpers/outbox';

/**
 * A rolling deploy: a newer program migrates the shared schema while this one still runs (or starts).
 * The newer program is played by the real migration code given a longer list.
 */

let dir: string;
let pg: TestDatabase | undefined;
const stores: Store[] = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'schema-compat-'));
  if (TEST_STORE === 'postgres') pg = await testDatabase();
});

afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
  await pg?.drop();
  pg = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const dbPath = () => join(dir, 'service.db');
const known = () => (pg === undefined ? MIGRATIONS : PG_MIGRATIONS);

async function open(migrateSchema = true): Promise<Store> {
  const config = { sqlitePath: dbPath(), databaseUrl: pg?.url ?? null, databasePoolSize: 2, databaseStatementTimeoutMs: 5000 };
  const store = await openStore(config, { migrate: migrateSchema });
  stores.push(store);
  return store;
}

/** The schema as a program knowing `list` leaves it. */
async function newerProgramMigrates(list: readonly Migration[]): Promise<void> {
  if (pg === undefined) {
    const db = new Database(dbPath());
    try {
      migrate(db, true, list);
    } finally {
      db.close();
    }
    return;
  }
  const client = new Client({ connectionString: pg.url });
  await client.connect();
  try {
    await migratePostgres(client, true, list);
  } finally {
    await client.end();
  }
}

async function oldestRecorded(): Promise<number> {
  if (pg !== undefined) return (await pg.query<{ oldest_version: number }>('SELECT oldest_version FROM schema_compat'))[0]!.oldest_version;
  const db = new Database(dbPath(), { readonly: true });
  try {
    return (db.prepare('SELECT oldest_version FROM schema_compat').get() as { oldest_version: number }).oldest_version;
  } finally {
    db.close();
  }
}

/** What a newer program could record: a floor this test chose, so that a rewrite by this program shows. */
async function recordOldest(version: number): Promise<void> {
  if (pg !== undefined) {
    await pg.query(`UPDATE schema_compat SET oldest_version = ${version}`);
    return;
  }
  const db = new Database(dbPath());
  try {
    db.prepare('UPDATE schema_compat SET oldest_version = ?').run(version);
  } finally {
    db.close();
  }
}

const additive: Migration = {
  additive: true,
  sql: 'CREATE TABLE rollout_notes (note text); ALTER TABLE auth_code_outbox ADD COLUMN region text',
};
const breaking: Migration = { additive: false, sql: 'ALTER TABLE devices RENAME TO devices_v2' };

const reason = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: Error) => e.message,
  );

test('migrating records the oldest program version that can run on the schema', async () => {
  await open();
  expect(await oldestRecorded()).toBe(oldestCompatible(known()));
  expect(oldestCompatible([breaking, breaking, additive, additive])).toBe(2);
  expect(oldestCompatible([breaking, additive, breaking])).toBe(3);
});

test('a newer schema whose new migrations are all additive: this program stays ready, serves, starts, and writes', async () => {
  const running = await open();
  await newerProgramMigrates([...known(), additive]);
  // This program's own last migrations may be additive too: the oldest recorded can be older still.
  expect(await oldestRecorded()).toBe(oldestCompatible([...known(), additive]));
  expect(await oldestRecorded()).toBeLessThanOrEqual(known().length);
  await expect(running.ping()).resolves.toBeUndefined();
  await running.outbox.enqueue('1234', '+9647701234567');
  // An instance of the older program starting now (a restart mid-deploy) comes up, as a worker does.
  const started = await open();
  await expect(started.ping()).resolves.toBeUndefined();
  expect(await (await open(false)).deviceToken('none')).toBeNull();
  expect(await queued(started)).toEqual([{ code: '1234', phone: '+9647701234567' }]);
  // It did not take the schema back to what it knows: a floor it would not write stays as recorded.
  await recordOldest(1);
  expect(oldestCompatible(known())).not.toBe(1);
  await open();
  expect(await oldestRecorded()).toBe(1);
});

test('a newer schema with a migration that is not additive: not ready, with the reason; a start is refused', async () => {
  const running = await open();
  await newerProgramMigrates([...known(), additive, breaking]);
  const n = known().length;
  expect(await oldestRecorded()).toBe(n + 2);
  const why = `database schema version ${n + 2} is newer than this program supports (${n}); upgrade the program`;
  expect(await reason(running.ping())).toBe(why);
  expect(await reason(open())).toBe(`${pg === undefined ? `SQLITE_PATH (${dbPath()})` : `DATABASE_URL (${pg.url})`}: ${why}`);
});

test('a worker (migrate: false) never migrates: a schema behind this program is refused, and left as it was', async () => {
  if (pg === undefined) new Database(dbPath()).close();
  expect(await reason(open(false))).toMatch(/database schema version 0 is older than this program's \(\d+\); it has not been migrated$/);
  await open();
  await expect((await open(false)).ping()).resolves.toBeUndefined();
});
