import fs from 'node:fs';
import path from 'node:path';
import { BUILD_DIR, PROJECT_ROOT } from './paths';

/**
 * What a production install runs, copied into `dir`: the tests' build (under its own name), wsdl/,
 * package.json and scripts/check-node.js (the Node check every entry point runs first), with
 * node_modules linked or copied. Returns the build's root in it.
 */
export function copyInstall(dir: string, modules: 'link' | 'copy'): string {
  const build = path.join(dir, path.basename(BUILD_DIR));
  fs.cpSync(BUILD_DIR, build, { recursive: true });
  fs.cpSync(path.join(PROJECT_ROOT, 'wsdl'), path.join(dir, 'wsdl'), { recursive: true });
  fs.copyFileSync(path.join(PROJECT_ROOT, 'package.json'), path.join(dir, 'package.json'));
  fs.mkdirSync(path.join(dir, 'scripts'), { recursive: true });
  fs.copyFileSync(path.join(PROJECT_ROOT, 'scripts', 'check-node.js'), path.join(dir, 'scripts', 'check-node.js'));
  // A worktree's node_modules may be a link to another checkout's.
  const installed = fs.realpathSync(path.join(PROJECT_ROOT, 'node_modules'));
  if (modules === 'link') fs.symlinkSync(installed, path.join(dir, 'node_modules'), 'dir');
  else fs.cpSync(installed, path.join(dir, 'node_modules'), { recursive: true, verbatimSymlinks: true });
  return build;
}
