/**
 * Versioned schemas, one append-only list per dialect (sqlite.ts, postgres.ts): migration i brings a
 * database from version i to i+1. Never edit an entry that has shipped; append a new one. Both lists
 * describe the same tables (see docs/operations.md and docs/storage.md's schema section), so they grow together.
 */
export interface Migration {
  /**
   * True when a program that stops at the version before this one still runs correctly on the schema
   * after it: the migration only adds (a table, an index, a nullable column or one with a default) and
   * changes no row the older program reads or writes. A rolling deploy keeps older instances ready
   * across additive migrations only; when unsure, false.
   */
  additive: boolean;
  sql: string;
}

/**
 * The oldest program version (the number of migrations it knows) that can still run on the schema
 * `list` brings a database to: everything it does not know is additive. Recorded in schema_compat by
 * whoever migrates, since an older program cannot know what the newer migrations were.
 */
export function oldestCompatible(list: readonly Migration[]): number {
  let oldest = list.length;
  while (oldest > 0 && list[oldest - 1]!.additive) oldest -= 1;
  return oldest;
}

/**
 * Why a program knowing `supported` migrations cannot run on a schema at version `found` whose
 * schema_compat says `oldest` (null: not recorded), or null when it can.
 */
export function schemaProblem(found: number, oldest: number | null, supported: number): string | null {
  if (found === supported) return null;
  if (found < supported) return `database schema version ${found} is older than this program's (${supported}); it has not been migrated`;
  if (oldest !== null && oldest <= supported) return null;
  return `database schema version ${found} is newer than this program supports (${supported}); upgrade the program`;
}

export class SchemaVersionError extends Error {
  override name = 'SchemaVersionError';

  constructor(message: string) {
    super(message);
  }
}

/** How a store's opening treats the schema: the cluster primary migrates; its workers only check. */
export interface OpenOptions {
  /** Default true. False: never write the schema; a schema behind this program's is refused. */
  migrate?: boolean;
}
