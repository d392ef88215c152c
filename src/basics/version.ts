import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from './paths';

/**
 * Which build this is: package.json's name and version, and the git commit of the checkout it runs
 * from when there is one to read (a release archive or an installed package has none). Every place
 * that says the version (each command's `--version`) asks here.
 */
export interface BuildVersion {
  name: string;
  version: string;
  /** The full commit hash, or null when unknown. */
  commit: string | null;
}

let known: BuildVersion | undefined;

export function buildVersion(): BuildVersion {
  if (known === undefined) {
    const pkg = JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { name: string; version: string };
    known = { name: pkg.name, version: pkg.version, commit: gitCommit(projectRoot) };
  }
  return known;
}

/** One line, as `--version` prints it: `student-info-service 1.0.0 (commit 0123456789ab)`. */
export function versionLine(): string {
  const { name, version, commit } = buildVersion();
  return `${name} ${version}${commit === null ? '' : ` (commit ${commit.slice(0, 12)})`}`;
}

const SHA = /^[0-9a-f]{40,64}$/;

/**
 * HEAD's commit, read from the repository's files: no git program is needed, nor allowed to refuse
 * a directory another user owns (the service runs as its own user on root's checkout). A worktree's
 * `.git` is a file naming its directory; a branch may be packed into `packed-refs`.
 */
export function gitCommit(root: string): string | null {
  try {
    let gitDir = path.join(root, '.git');
    if (fs.statSync(gitDir).isFile()) {
      const named = /^gitdir:\s*(.+)$/m.exec(fs.readFileSync(gitDir, 'utf8'));
      if (named === null) return null;
      gitDir = path.resolve(root, named[1]!.trim());
    }
    const head = fs.readFileSync(path.join(gitDir, 'HEAD'), 'utf8').trim();
    const ref = /^ref:\s*(\S+)$/.exec(head)?.[1];
    if (ref === undefined) return SHA.test(head) ? head : null;
    const commonFile = path.join(gitDir, 'commondir');
    const common = fs.existsSync(commonFile) ? path.resolve(gitDir, fs.readFileSync(commonFile, 'utf8').trim()) : gitDir;
    for (const dir of new Set([gitDir, common])) {
      const file = path.join(dir, ref);
      if (fs.existsSync(file)) {
        const sha = fs.readFileSync(file, 'utf8').trim();
        return SHA.test(sha) ? sha : null;
      }
    }
    const packed = path.join(common, 'packed-refs');
    if (!fs.existsSync(packed)) return null;
    for (const line of fs.readFileSync(packed, 'utf8').split('\n')) {
      const [sha, name] = line.trim().split(' ');
      if (name === ref && sha !== undefined && SHA.test(sha)) return sha;
    }
    return null;
  } catch {
    return null;
  }
}
