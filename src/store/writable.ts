import fs from 'node:fs';
import path from 'node:path';
import { notADirectory } from '../basics/directory';
import { freeBytes } from '../basics/disk';

/**
 * Whether this process can write a SQLite database at `file`: the file, its `-wal` and `-shm`
 * companions (when they exist) and its directory (where SQLite creates them). A file the service
 * cannot write opens without complaint, reads work, and every write fails ("attempt to write a
 * readonly database"), typically after an import run as root left root-owned companions behind. So
 * the start refuses it, and readiness checks it again (a permission or mount can change later).
 * Null when writable, else one line saying which path and why. ':memory:' and '' have no file.
 */
export function sqliteNotWritable(file: string): string | null {
  if (file === ':memory:' || file === '') return null;
  const dir = path.dirname(file);
  // A directory not there yet is created at open, where its own failure is reported.
  if (!fs.existsSync(dir)) return null;
  const notDir = notADirectory(dir);
  if (notDir !== null) return notDir;
  const checks: [string, number, string][] = [
    [dir, fs.constants.W_OK | fs.constants.X_OK, 'its directory'],
    [file, fs.constants.R_OK | fs.constants.W_OK, 'the file'],
    [`${file}-wal`, fs.constants.R_OK | fs.constants.W_OK, 'its -wal file'],
    [`${file}-shm`, fs.constants.R_OK | fs.constants.W_OK, 'its -shm file'],
  ];
  for (const [p, mode, what] of checks) {
    let st: fs.Stats;
    try {
      st = fs.statSync(p);
    } catch {
      continue; // absent: SQLite creates it, in the directory checked first
    }
    try {
      fs.accessSync(p, mode);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      const why = code === 'EROFS' ? 'the file system is read-only' : `owner uid ${st.uid}, mode ${(st.mode & 0o777).toString(8)}`;
      return `${what} ${p} is not writable by this user (uid ${process.getuid?.() ?? '?'}): ${why}; the service writes the file, its -wal and -shm companions and its directory`;
    }
  }
  return null;
}

/**
 * The free space below which a SQLite file's file system counts as full. SQLite's WAL reuses its own
 * space once checkpointed, so on a full disk a write may still succeed for a while, then every write
 * fails at once (SQLITE_FULL) when the WAL must grow or a checkpoint must add pages to the file: a
 * write that succeeded proves too little. Under this much room (a few hundred pages) the store is
 * treated as unable, as Elasticsearch's flood-stage watermark and etcd's NOSPACE alarm refuse writes
 * before the disk refuses them.
 */
export const MIN_FREE_BYTES = 1024 * 1024;

/**
 * Null when the file system holding the SQLite file at `file` has room, else one line saying how
 * little.
 */
export async function sqliteNoRoom(file: string): Promise<string | null> {
  if (file === ':memory:' || file === '') return null;
  const dir = path.dirname(file);
  const free = freeBytes(await fs.promises.statfs(dir));
  if (free >= MIN_FREE_BYTES) return null;
  return `the file system holding ${dir} is full: ${free} bytes free (under ${MIN_FREE_BYTES / 1024 / 1024} MiB)`;
}
