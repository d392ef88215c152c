import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from './paths';

/** Which build is running: the package's version, and the git commit it was built from when known. */
export interface BuildInfo {
  version: string;
  /** The commit's full hash, with `-dirty` when the checkout had changes; null when not built in a git checkout. */
  commit: string | null;
}

/**
 * What scripts/build.js writes at the build's root (dist/build-info.json), beside src/ and scripts/:
 * the commit is known when the build ran, and asking git at run time would need git on the server,
 * and a checkout, and would name whatever the checkout holds now rather than what was built.
 */
export const BUILD_INFO_FILE = 'build-info.json';

let known: BuildInfo | undefined;

/** This process's build, read once: the file the build wrote, else (run from the sources) package.json's version. */
export function buildInfo(): BuildInfo {
  known ??= readBuildInfo(path.join(__dirname, '..', '..', BUILD_INFO_FILE));
  return known;
}

function readBuildInfo(file: string): BuildInfo {
  try {
    const { version, commit } = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<BuildInfo>;
    if (typeof version === 'string') return { version, commit: typeof commit === 'string' && commit !== '' ? commit : null };
  } catch {
    // not built by scripts/build.js (ts-jest, a bare tsc): the sources' own version
  }
  const { version } = JSON.parse(fs.readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { version: string };
  return { version, commit: null };
}

/**
 * The build in a few words, for a start line or a page: `1.0.0, commit 3f2a9c1d...` (the whole hash:
 * a short one with seven digits in a row would be masked in a log line as a phone, basics/mask.ts,
 * which leaves hex ids of 16 characters or more alone), `, with changes not committed` for `-dirty`.
 */
export function buildText(info: BuildInfo = buildInfo()): string {
  if (info.commit === null) return `${info.version}, commit unknown`;
  const dirty = info.commit.endsWith('-dirty');
  return `${info.version}, commit ${dirty ? info.commit.slice(0, -'-dirty'.length) : info.commit}${dirty ? ', with changes not committed' : ''}`;
}
