/**
 * Loads students and device tokens from CSV into the configured store (SQLite, or PostgreSQL when
 * DATABASE_URL is set), streaming the files. Bad input writes nothing. PostgreSQL merges in one
 * transaction; SQLite in short batches so the service's writers never wait long for the file's lock,
 * so a storage failure there may leave part merged: the command then says to run it again.
 *
 *   npm run import -- --students students.csv --devices devices.csv   (either or both)
 *   npm run import -- --students students.csv --replace               (the file is the whole truth for its schools)
 *   npm run import -- --demo                                          (the sample set in demo/)
 *
 * Exit codes: 0 imported, 1 bad input, storage or configuration problem, 2 usage.
 * Runs compiled (node dist/scripts/import.js); its parts run from source in the tests.
 */
import '../src/basics/supported-node';
import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SingleBar } from 'cli-progress';
import { ConfigError, loadConfig, settingWarnings } from '../src/config';
import { projectRoot } from '../src/basics/paths';
import { type CommandSpec, parseCommandLine, usageError, type Values } from '../src/basics/command-line';
import { fileSource, ImportError, importFiles, type ImportSource, ImportStoppedError } from '../src/store/import';
import { openStore, storeLocation, StoreOpenError } from '../src/store/open';
import type { Store } from '../src/store/store';
import { runMain } from './run-main';

export const COMMAND = {
  usage: ['npm run import -- [--students FILE.csv] [--devices FILE.csv] [--replace] [--delimiter ";"] | --demo'],
  summary: [
    'Loads students and device tokens from CSV files into the configured store (SQLite, or PostgreSQL',
    'when DATABASE_URL is set). Bad input writes nothing (docs/import.md).',
  ],
  options: {
    students: { type: 'string', value: 'FILE.csv', help: 'the students file' },
    devices: { type: 'string', value: 'FILE.csv', help: "the devices file (each student's device tokens)" },
    replace: {
      type: 'boolean',
      help: "the students file is the whole truth for its schools: a school's pupils it no longer lists are removed",
    },
    delimiter: { type: 'string', value: 'CHAR', help: 'the field separator: one character, "tab" for a tab (default ",")' },
    demo: { type: 'boolean', help: 'the sample set in demo/' },
  },
  notes: ['exit codes: 0 imported, 1 bad input, storage or configuration problem, 2 usage'],
} as const satisfies CommandSpec;

/** Progress of one file by bytes read. */
export interface Progress {
  start(name: string, totalBytes: number): void;
  update(bytesRead: number): void;
  stop(): void;
}

export interface ImportIo {
  out(line: string): void;
  err(line: string): void;
  env: Record<string, string | undefined>;
  /** Where relative paths start: the directory the command was run from. */
  cwd: string;
  progress?: Progress;
}

/** Files smaller than this are read too fast for progress to mean anything. */
const PROGRESS_FROM_BYTES = 1e6;

/** A bar on a terminal; otherwise a plain line at each tenth of the file, which logs read well. */
function terminalProgress(): Progress {
  const progress = process.stderr.isTTY ? progressBar() : progressLines();
  let shown = false;
  return {
    start: (name, total) => {
      shown = total >= PROGRESS_FROM_BYTES;
      if (shown) progress.start(name, total);
    },
    update: (bytes) => shown && progress.update(bytes),
    stop: () => shown && progress.stop(),
  };
}

function progressBar(): Progress {
  const bar = new SingleBar({
    format: '{name} [{bar}] {percentage}% | {value}/{total} MB | {eta_formatted} left',
    stream: process.stderr,
    hideCursor: true,
  });
  let name = '';
  const mb = (bytes: number) => Math.round(bytes / 1e5) / 10;
  return {
    start: (n, total) => {
      name = n;
      bar.start(mb(total), 0, { name });
    },
    update: (bytes) => bar.update(mb(bytes), { name }),
    stop: () => bar.stop(),
  };
}

function progressLines(): Progress {
  let name = '';
  let total = 0;
  let next = 0;
  return {
    start: (n, t) => {
      name = n;
      total = t;
      next = 0.1;
    },
    update: (bytes) => {
      if (total === 0 || bytes / total < next) return;
      process.stderr.write(`${name}: ${Math.floor((bytes / total) * 100)}% read\n`);
      next = Math.floor((bytes / total) * 10 + 1) / 10;
    },
    stop: () => undefined,
  };
}

const processIo = (): ImportIo => ({
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  env: process.env,
  // npm runs scripts from the project's directory and says where it was started in INIT_CWD.
  cwd: process.env.INIT_CWD ?? process.cwd(),
  progress: terminalProgress(),
});

class UsageError extends Error {}

interface Args {
  demo: boolean;
  replace: boolean;
  delimiter: string;
  students?: string;
  devices?: string;
}

/** What the options say, or the refusal of a combination the parser cannot judge. */
function options(values: Values<typeof COMMAND>): Args {
  const args: Args = {
    demo: values.demo === true,
    replace: values.replace === true,
    delimiter: ',',
    students: values.students,
    devices: values.devices,
  };
  if (values.delimiter !== undefined) {
    const d = values.delimiter;
    args.delimiter = d === '\\t' || d === 'tab' ? '\t' : d;
    if (args.delimiter.length !== 1 || args.delimiter === '"' || args.delimiter === '\n' || args.delimiter === '\r') {
      throw new UsageError('--delimiter must be one character other than a quote or a line break, such as ";"');
    }
  }
  if (args.demo && (args.students !== undefined || args.devices !== undefined)) {
    throw new UsageError('--demo cannot be combined with --students or --devices');
  }
  if (!args.demo && args.students === undefined && args.devices === undefined) {
    throw new UsageError('nothing to import');
  }
  return args;
}

/** A readable file's size; a missing file is a usage error, found before any content is read. */
function sizeOf(path: string, shown: string): number {
  try {
    const stat = statSync(path);
    if (stat.isDirectory()) throw new UsageError(`cannot read ${shown}: it is a directory`);
    return stat.size;
  } catch (err) {
    if (err instanceof UsageError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot read ${shown}: ${code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
  }
}

function source(shown: string, path: string, size: number, progress: Progress | undefined): ImportSource {
  const file = fileSource(shown, path, progress?.update);
  return {
    name: shown,
    async *read() {
      progress?.start(shown, size);
      try {
        yield* file.read();
      } finally {
        progress?.stop();
      }
    },
  };
}

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

export async function main(argv: readonly string[], io: ImportIo = processIo()): Promise<number> {
  const line = parseCommandLine(COMMAND, argv, io);
  if (typeof line === 'number') return line;
  let args: Args;
  try {
    args = options(line.values);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    return usageError(COMMAND, err.message, io);
  }

  // As the service says them: a misspelt DATABASE_URL would import into SQLite in silence.
  for (const line of settingWarnings(io.env)) io.err(`warning: ${line}`);
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(io.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    io.err(`error: ${err.message}`);
    return 1;
  }

  const named = args.demo
    ? { students: join(projectRoot, 'demo', 'students.csv'), devices: join(projectRoot, 'demo', 'devices.csv') }
    : { students: args.students, devices: args.devices };
  const files: { students?: ImportSource; devices?: ImportSource } = {};
  try {
    for (const kind of ['students', 'devices'] as const) {
      const shown = named[kind];
      if (shown === undefined) continue;
      const path = resolve(io.cwd, shown);
      files[kind] = source(shown, path, sizeOf(path, shown), io.progress);
    }
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.err(`error: ${err.message}`);
    return 2;
  }

  const started = process.hrtime.bigint();
  let store: Store | undefined;
  try {
    const report = await importFiles(files, { delimiter: args.delimiter, replace: args.replace }, async () => {
      store = await openStore(config);
      return store.beginImport();
    });
    for (const line of report.warnings) io.err(line);
    if (report.warningCount > report.warnings.length) {
      io.err(`... and ${plural(report.warningCount - report.warnings.length, 'more warning', 'more warnings')}`);
    }
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const removed = args.replace ? `, removed ${plural(report.removed, 'student', 'students')} absent from the file` : '';
    io.out(
      `imported ${plural(report.students, 'student', 'students')}, ${plural(report.devices, 'device', 'devices')}${removed}` +
        ` into ${storeLocation(config)} in ${seconds.toFixed(1)} s`,
    );
    return 0;
  } catch (err) {
    if (err instanceof StoreOpenError) {
      io.err(`error: ${err.message}`);
    } else if (err instanceof ImportError) {
      for (const line of err.errors) io.err(line);
      if (err.total > err.errors.length) io.err(`... ${plural(err.total, 'error', 'errors')} in all`);
      io.err('nothing was written');
    } else if (err instanceof ImportStoppedError) {
      io.err(`error: import into ${storeLocation(config)}: ${err.message}`);
    } else {
      io.err(`error: import into ${storeLocation(config)} failed, nothing was written: ${(err as Error).message}`);
    }
    return 1;
  } finally {
    await store?.close();
  }
}

if (require.main === module) runMain((argv) => main(argv));
