import fs from 'node:fs';
import path from 'node:path';

/**
 * The directory holding package.json. Found by walking up rather than by a fixed `..` count, because
 * this file runs from src/ under ts-jest and from dist/src/ (or .dev-build/src/) after tsc.
 */
function findProjectRoot(start: string): string {
  for (let dir = start; ; ) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`No package.json found in ${start} or any directory above it`);
    dir = parent;
  }
}

export const projectRoot: string = findProjectRoot(__dirname);
