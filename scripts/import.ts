/**
 * Loads students and device tokens from CSV into the configured SQLite database.
 *
 *   npm run import -- --students students.csv --devices devices.csv   (either or both)
 *   npm run import -- --demo                                          (the sample set in demo/)
 *
 * Exit codes: 0 imported, 1 bad input or configuration (nothing written), 2 usage.
 * Runs the same from source (tsx scripts/import.ts) and compiled (node dist/scripts/import.js).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../src/config';
import { decodeUtf8 } from '../src/store/csv';
import { ImportError, parseImport, type ImportFile } from '../src/store/import';
import { openSqliteStore, type SqliteStore } from '../src/store/sqlite';
import { projectRoot } from '../src/paths';
import { runMain } from './run-main';

export const USAGE = 'usage: npm run import -- [--students FILE.csv] [--devices FILE.csv] | --demo';

export interface ImportIo {
  out(line: string): void;
  err(line: string): void;
  env: Record<string, string | undefined>;
}

const processIo: ImportIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
};

class UsageError extends Error {}

interface Args {
  help: boolean;
  demo: boolean;
  students?: string;
  devices?: string;
}

function parseArgs(argv: readonly string[]): Args {
  const args: Args = { help: false, demo: false };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const flag = arg.startsWith('--') && eq !== -1 ? arg.slice(0, eq) : arg;
    const inline = flag === arg ? undefined : arg.slice(eq + 1);
    switch (flag) {
      case '-h':
      case '--help':
        args.help = true;
        break;
      case '--demo':
        if (inline !== undefined) throw new UsageError('--demo takes no value');
        args.demo = true;
        break;
      case '--students':
      case '--devices': {
        const key = flag === '--students' ? 'students' : 'devices';
        if (args[key] !== undefined) throw new UsageError(`${flag} given more than once`);
        const value = inline ?? argv[++i];
        if (value === undefined || value === '' || (inline === undefined && value.startsWith('--'))) {
          throw new UsageError(`${flag} needs a file name`);
        }
        args[key] = value;
        break;
      }
      default:
        throw new UsageError(arg.startsWith('-') ? `unknown option ${arg}` : `unexpected argument "${arg}"`);
    }
  }
  if (args.help) return args;
  if (args.demo && (args.students !== undefined || args.devices !== undefined)) {
    throw new UsageError('--demo cannot be combined with --students or --devices');
  }
  if (!args.demo && args.students === undefined && args.devices === undefined) {
    throw new UsageError('nothing to import');
  }
  return args;
}

function readBytes(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : (err as Error).message;
    throw new UsageError(`cannot read ${path}: ${why}`);
  }
}

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

export async function main(argv: readonly string[], io: ImportIo = processIo): Promise<number> {
  let args: Args;
  try {
    args = parseArgs(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.err(`error: ${err.message} (${USAGE})`);
    return 2;
  }
  if (args.help) {
    io.out(USAGE);
    return 0;
  }

  let sqlitePath: string;
  try {
    sqlitePath = loadConfig(io.env).sqlitePath;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    io.err(`error: ${err.message}`);
    return 1;
  }

  const paths = args.demo
    ? { students: join(projectRoot, 'demo', 'students.csv'), devices: join(projectRoot, 'demo', 'devices.csv') }
    : { students: args.students, devices: args.devices };

  // Read everything before judging anything, so a missing second file is reported as usage
  // rather than hidden behind the first file's content errors.
  let bytes: { students?: Buffer; devices?: Buffer };
  try {
    bytes = {
      students: paths.students === undefined ? undefined : readBytes(paths.students),
      devices: paths.devices === undefined ? undefined : readBytes(paths.devices),
    };
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.err(`error: ${err.message}`);
    return 2;
  }

  const errors: string[] = [];
  const decode = (name: string | undefined, data: Buffer | undefined): ImportFile | undefined => {
    if (name === undefined || data === undefined) return undefined;
    try {
      return { name, text: decodeUtf8(data) };
    } catch {
      errors.push(`${name}: not valid UTF-8 text (save the file as UTF-8)`);
      return undefined;
    }
  };
  const studentsFile = decode(paths.students, bytes.students);
  const devicesFile = decode(paths.devices, bytes.devices);

  let parsed: ReturnType<typeof parseImport> | undefined;
  try {
    parsed = parseImport(studentsFile, devicesFile);
  } catch (err) {
    if (!(err instanceof ImportError)) throw err;
    errors.push(...err.errors);
  }
  if (errors.length > 0 || parsed === undefined) {
    for (const line of errors) io.err(line);
    io.err('nothing was written');
    return 1;
  }

  let store: SqliteStore;
  try {
    store = openSqliteStore(sqlitePath);
  } catch (err) {
    io.err(`error: cannot open database ${sqlitePath}: ${(err as Error).message}`);
    return 1;
  }
  try {
    const counts = await store.upsert(parsed.students, parsed.devices);
    io.out(
      `imported ${plural(counts.students, 'student', 'students')}, ${plural(counts.devices, 'device', 'devices')} into ${sqlitePath}`,
    );
    return 0;
  } catch (err) {
    io.err(`error: import into ${sqlitePath} failed, nothing was written: ${(err as Error).message}`);
    return 1;
  } finally {
    await store.close();
  }
}

if (require.main === module) runMain(main);
