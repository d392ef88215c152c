export { type Migration, type OpenOptions, oldestCompatible, schemaProblem, SchemaVersionError } from './version';
export { MIGRATIONS, migrate, schemaState } from './sqlite';
export { PG_MIGRATIONS, migratePostgres, pgSchemaState } from './postgres';
