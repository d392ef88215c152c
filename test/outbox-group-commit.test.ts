import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type OutboxConnection, SqlOutbox } from '../src/store/outbox';
import { openStore } from '../src/store/open';
import type { Store } from '../src/store/store';
import { queued } from './helpers/outbox';
import { testDatabase, type TestDatabase } from './helpers/postgres';

/**
 * AuthCodes that reach the outbox in one turn of the event loop are committed by one INSERT (one
 * transaction, one fsync), each answered only once its row is committed; a refused batch is tried
 * row by row, so a row the store refuses fails only its own request.
 */

/** A connection that records each statement and refuses what `refuse` says. */
function recording(refuse: (sql: string, params: readonly unknown[]) => boolean = () => false) {
  const runs: { sql: string; rows: number }[] = [];
  const run = async (sql: string, params: readonly unknown[]) => {
    runs.push({ sql, rows: params.length / 4 });
    if (refuse(sql, params)) throw new Error('refused');
    return params.length / 4;
  };
  const conn: OutboxConnection = {
    run,
    all: async () => [],
    // No limits are checked here: the transaction is its writes, in order.
    exclusive: async (_read, plan) => {
      const { writes, result } = plan([]);
      for (const w of writes) await run(w.sql, w.params);
      return result;
    },
  };
  return { conn, runs };
}

const settle = (promises: Promise<unknown>[]) =>
  Promise.all(
    promises.map((p) =>
      p.then(
        () => 'ok',
        (e: Error) => e.message,
      ),
    ),
  );

test('the AuthCodes of one turn go in one INSERT; a later turn makes its own', async () => {
  const { conn, runs } = recording();
  const outbox = new SqlOutbox(conn, '');
  await Promise.all([1, 2, 3, 4, 5].map((i) => outbox.enqueue(String(i), `+96477012345${i}0`)));
  expect(runs).toEqual([{ sql: expect.stringMatching(/VALUES \(\?, \?, \?, \?\)(, \(\?, \?, \?, \?\)){4}$/), rows: 5 }]);
  await outbox.enqueue('6', '+9647701234560');
  expect(runs.slice(1)).toEqual([
    { sql: 'INSERT INTO auth_code_outbox (code, phone, created_at, next_attempt_at) VALUES (?, ?, ?, ?)', rows: 1 },
  ]);
});

test('at most 32 rows an INSERT', async () => {
  const { conn, runs } = recording();
  const outbox = new SqlOutbox(conn, '');
  await Promise.all(Array.from({ length: 40 }, (_, i) => outbox.enqueue(String(i), '+9647701234567')));
  expect(runs.map((r) => r.rows)).toEqual([32, 8]);
});

test('a refused batch is tried row by row: only the row refused fails, and nothing is answered before its commit', async () => {
  // The store refuses any statement holding code 3.
  const { conn, runs } = recording((_sql, params) => params.includes('3'));
  const outbox = new SqlOutbox(conn, '');
  const answered: string[] = [];
  const outcomes = settle(['1', '2', '3', '4'].map((code) => outbox.enqueue(code, '+9647701234567').finally(() => answered.push(code))));
  // Nothing is answered in the turn it arrived: the commit comes after.
  await Promise.resolve();
  expect(answered).toEqual([]);
  expect(await outcomes).toEqual(['ok', 'ok', 'refused', 'ok']);
  expect(runs.map((r) => r.rows)).toEqual([4, 1, 1, 1, 1]);
});

describe('on the store', () => {
  let dir: string;
  let pg: TestDatabase | undefined;
  let store: Store;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'group-commit-'));
    if (process.env.TEST_STORE === 'postgres') pg = await testDatabase();
    store = await openStore({
      sqlitePath: join(dir, 'db.sqlite'),
      databaseUrl: pg?.url ?? null,
      databasePoolSize: 2,
      databaseStatementTimeoutMs: 5000,
    });
  });

  afterEach(async () => {
    await store.close();
    await pg?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('40 AuthCodes in one turn: every one stored once, in the order they came', async () => {
    const codes = Array.from({ length: 40 }, (_, i) => String(1000 + i));
    await Promise.all(codes.map((code, i) => store.outbox.enqueue(code, `+96477012${String(i).padStart(5, '0')}`)));
    expect((await queued(store)).map((m) => m.code)).toEqual(codes);
  });
});
