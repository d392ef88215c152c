export { SchemaVersionError } from './version';
export { MIGRATIONS, migrate } from './sqlite';
export { PG_MIGRATIONS, migratePostgres } from './postgres';
