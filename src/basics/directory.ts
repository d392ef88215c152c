import fs from 'node:fs';
import path from 'node:path';

/** A directory a setting names that cannot be there: the message says which path and why, in one line. */
export class DirectoryError extends Error {
  override name = 'DirectoryError';
}

/** `p` exists and is something other than a directory: what it is, for a message; null otherwise. */
export function notADirectory(p: string): string | null {
  let st: fs.Stats;
  try {
    st = fs.statSync(p);
  } catch {
    return null;
  }
  if (st.isDirectory()) return null;
  return `${p} is ${st.isFile() ? 'a file' : 'not a file system directory'}, not a directory`;
}

/** Why mkdir failed under `parent`, in words an operator acts on. */
function whyNot(e: NodeJS.ErrnoException, parent: string): string {
  switch (e.code) {
    case 'EROFS':
      return 'the file system is read-only';
    case 'EACCES': {
      const st = fs.statSync(parent, { throwIfNoEntry: false });
      const owner = st === undefined ? '' : `: ${parent} is owner uid ${st.uid}, mode ${(st.mode & 0o777).toString(8)}`;
      return `permission denied for this user (uid ${process.getuid?.() ?? '?'})${owner}`;
    }
    case 'EPERM':
      return `not permitted there (EPERM)`;
    // The parent is there, so this is its file system refusing new directories (/proc, /sys).
    case 'ENOENT':
      return `the file system of ${parent} does not take new directories (ENOENT)`;
    case 'ENOSPC':
      return 'no space left on the file system';
    case 'EDQUOT':
      return "the user's disk quota is used up";
    default:
      return e.code ?? e.message;
  }
}

/**
 * `mkdir -p` that fails once, in one line naming the path and why (DirectoryError). node's own
 * `mkdirSync(dir, { recursive: true })` loops for ever, at full CPU and silently, where mkdir says
 * ENOENT although the parent exists (`/proc/sys/x`), and reports ENOENT on a read-only file system
 * without naming it. Here the missing directories are found by walking up to the first that exists
 * (a file in the way is said as such), then each is made in turn, top down: at most one mkdir per
 * level of the path.
 */
export function makeDirectory(dir: string): void {
  const missing: string[] = [];
  for (let p = path.resolve(dir); ; ) {
    let st: fs.Stats | undefined;
    try {
      st = fs.statSync(p, { throwIfNoEntry: false });
    } catch (e) {
      throw new DirectoryError(`cannot look at ${p}: ${whyNot(e as NodeJS.ErrnoException, path.dirname(p))}`);
    }
    if (st !== undefined) {
      if (!st.isDirectory()) throw new DirectoryError(notADirectory(p) ?? `${p} is not a directory`);
      break;
    }
    missing.unshift(p);
    const parent = path.dirname(p);
    if (parent === p) break;
    p = parent;
  }
  for (const p of missing) {
    try {
      fs.mkdirSync(p);
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      // Made meanwhile by another process (two instances starting at once): as good as made here.
      if (err.code === 'EEXIST' && notADirectory(p) === null) continue;
      if (err.code === 'EEXIST' || err.code === 'ENOTDIR')
        throw new DirectoryError(notADirectory(p) ?? `cannot create the directory ${p}: ${err.code}`);
      throw new DirectoryError(`cannot create the directory ${p}: ${whyNot(err, path.dirname(p))}`);
    }
  }
}
