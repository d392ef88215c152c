import { DirectoryError } from '../basics/directory';
import type { Config } from '../config';
import { type OpenOptions, SchemaVersionError } from './migrations';
import { redactUrl } from './redact';
import { openSqliteStore } from './sqlite';
import type { Store } from './store';
import { sqliteNotWritable } from './writable';

/** A storage problem at start, as one line naming the setting and where it points. */
export class StoreOpenError extends Error {
  override name = 'StoreOpenError';
}

type StoreConfig = Pick<Config, 'sqlitePath' | 'databaseUrl' | 'databasePoolSize' | 'databaseStatementTimeoutMs'>;

/** Where the configured store is, for messages: the file, or the URL without its password. */
export function storeLocation(config: StoreConfig): string {
  return config.databaseUrl === null ? config.sqlitePath : redactUrl(config.databaseUrl);
}

/**
 * The configured store, migrated (or with `migrate: false` only checked, as a cluster worker opens
 * it): PostgreSQL when DATABASE_URL is set, else the SQLite file.
 */
export async function openStore(config: StoreConfig, options: OpenOptions = {}): Promise<Store> {
  if (config.databaseUrl !== null) {
    const where = `DATABASE_URL (${storeLocation(config)})`;
    try {
      // Loaded only here: pg and its companions are some tens of milliseconds of every start otherwise.
      const { PostgresStore } = await import('./postgres');
      return await PostgresStore.open(
        {
          url: config.databaseUrl,
          poolSize: config.databasePoolSize,
          statementTimeoutMs: config.databaseStatementTimeoutMs,
        },
        options,
      );
    } catch (err) {
      throw new StoreOpenError(`${where}: ${postgresProblem(err)}`);
    }
  }
  const notWritable = sqliteNotWritable(config.sqlitePath);
  if (notWritable !== null) throw new StoreOpenError(`SQLITE_PATH (${config.sqlitePath}): ${notWritable}`);
  try {
    return openSqliteStore(config.sqlitePath, options);
  } catch (err) {
    throw new StoreOpenError(`SQLITE_PATH (${config.sqlitePath}): ${sqliteProblem(err)}`);
  }
}

const oneLine = (s: string): string => s.replace(/\s+/g, ' ').trim();

function postgresProblem(err: unknown): string {
  if (err instanceof SchemaVersionError) return err.message;
  const e = err as { code?: string; message?: string };
  switch (e.code) {
    case '28P01':
    case '28000':
      return `PostgreSQL refused the login: ${oneLine(e.message ?? '')}`;
    case '3D000':
      return `no such database: ${oneLine(e.message ?? '')}`;
    case 'ECONNREFUSED':
      return 'connection refused: is PostgreSQL running and listening there?';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'unknown host';
    default:
      return oneLine(e.message ?? String(err));
  }
}

function sqliteProblem(err: unknown): string {
  if (err instanceof SchemaVersionError) return err.message;
  if (err instanceof DirectoryError) return err.message;
  const e = err as { code?: string; message?: string };
  const code = e.code ?? '';
  if (code === 'SQLITE_NOTADB') return 'the file is not a SQLite database';
  if (code.startsWith('SQLITE_READONLY')) {
    return 'the database is read-only for this user; the service needs to write the file and its directory (WAL)';
  }
  if (code.startsWith('SQLITE_CANTOPEN')) return 'cannot open the file: check that it and its directory are writable by this user';
  return oneLine(e.message ?? String(err));
}
