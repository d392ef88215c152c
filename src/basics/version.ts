import fs from 'node:fs';
import path from 'node:path';
import { buildInfo } from './build-info';
import { projectRoot } from './paths';

/**
 * One line, as every command's `--version` prints it: package.json's name and the build's version
 * and commit (basics/build-info.ts, written by the build), e.g. `student-info-service 1.0.0 (commit
 * 0123456789ab)`, `-dirty` after it when the build had changes not committed.
 */
export function versionLine(): string {
  const { name } = JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { name: string };
  const { version, commit } = buildInfo();
  if (commit === null) return `${name} ${version}`;
  const dirty = commit.endsWith('-dirty');
  return `${name} ${version} (commit ${commit.slice(0, 12)}${dirty ? '-dirty' : ''})`;
}
