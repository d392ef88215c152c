import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/** Which store the behaviour suites run on: jest.config.js sets 'postgres' for its postgres project. */
export const TEST_STORE: 'sqlite' | 'postgres' = process.env.TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';

/** The machine's PostgreSQL; each test file works in a schema of its own there. */
export const POSTGRES_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestDatabase {
  /** POSTGRES_URL with the schema as its search_path: what DATABASE_URL is set to. */
  url: string;
  schema: string;
  /** Runs SQL in the schema with a connection of its own, outside the store under test. */
  query<T>(sql: string, params?: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

/** A new, empty schema named <prefix>_<random>, dropped (with everything in it) by drop(). */
export async function testDatabase(prefix = 't6'): Promise<TestDatabase> {
  const schema = `${prefix}_${randomBytes(6).toString('hex')}`;
  const run = async <T>(connectionString: string, sql: string, params: unknown[] = []): Promise<T[]> => {
    const client = new Client({ connectionString });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows as T[];
    } finally {
      await client.end();
    }
  };
  await run(POSTGRES_URL, `CREATE SCHEMA ${schema}`);
  const url = new URL(POSTGRES_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    schema,
    query: (sql, params) => run(url.toString(), sql, params),
    drop: async () => void (await run(POSTGRES_URL, `DROP SCHEMA IF EXISTS ${schema} CASCADE`)),
  };
}
