import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { copyInstall } from './install-copy';
import { BUILD_DIR, PROJECT_ROOT } from './paths';

/**
 * Tests that run the service as another user (nobody) need every file it runs to be readable by that
 * user: node itself, the build, node_modules, wsdl/, package.json and scripts/check-node.js (the
 * Node check every entry point runs first). A clone under root's home (mode 700, as in most containers) or in a `mktemp -d` folder is not. Then what runs is copied, once per
 * test file, to a folder under the system's temporary directory that every user can read, and removed
 * by `removeCopies` (call it in afterAll).
 */
export interface Runnable {
  node: string;
  /** The build's root: `src/main.js` and `src/store/sqlite.js` are under it. */
  build: string;
}

const copies: string[] = [];
const byUid = new Map<number, Runnable>();

/** True when `uid` can read each of `files` (and so enter every folder above them). */
function canRead(uid: number, files: string[]): boolean {
  const run = spawnSync('/bin/sh', ['-c', 'for f in "$@"; do test -r "$f" || exit 1; done', 'sh', ...files], { uid, gid: uid });
  return run.status === 0;
}

export function runnableAs(uid: number): Runnable {
  const known = byUid.get(uid);
  if (known !== undefined) return known;
  const node = canRead(uid, [process.execPath]) ? process.execPath : null;
  const inPlace = canRead(uid, [
    path.join(BUILD_DIR, 'src', 'main.js'),
    path.join(PROJECT_ROOT, 'package.json'),
    path.join(PROJECT_ROOT, 'wsdl'),
    path.join(PROJECT_ROOT, 'scripts', 'check-node.js'),
    require.resolve('better-sqlite3'),
  ]);
  let runnable: Runnable = { node: node ?? process.execPath, build: BUILD_DIR };
  if (node === null || !inPlace) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'student-info-as-other-user-'));
    copies.push(dir);
    const build = copyInstall(dir, 'copy');
    const copiedNode = path.join(dir, 'node');
    if (node === null) fs.copyFileSync(process.execPath, copiedNode);
    spawnSync('chmod', ['-R', 'a+rX', dir]);
    runnable = { node: node ?? copiedNode, build };
    if (!canRead(uid, [runnable.node, path.join(build, 'src', 'main.js')]))
      throw new Error(`uid ${uid} cannot read a copy of the service in ${dir}`);
  }
  byUid.set(uid, runnable);
  return runnable;
}

export function removeCopies(): void {
  for (const dir of copies.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  byUid.clear();
}
