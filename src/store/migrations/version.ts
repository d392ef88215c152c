/**
 * Versioned schemas, one append-only list per dialect (sqlite.ts, postgres.ts): migration i brings a
 * database from version i to i+1. Never edit an entry that has shipped; add a new one. Both lists
 * describe the same tables (see the README's schema section), so they grow together.
 */
export class SchemaVersionError extends Error {
  override name = 'SchemaVersionError';

  constructor(found: number, supported: number) {
    super(`database schema version ${found} is newer than this program supports (${supported}); upgrade the program`);
  }
}

