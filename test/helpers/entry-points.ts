import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from './paths';

/**
 * Every file a process starts from, as built (relative to dist/ or the tests' build), and how a
 * person runs it: the service (which the cluster's workers run too), the shadow copier (mirror.ts
 * starts it), the operator commands, the development tools and the processes the benchmark starts.
 * `entrySources()` finds them in the sources, so a new one cannot be left out of the tests.
 */
export interface EntryPoint {
  /** The built file, relative to the build's root. */
  file: string;
  /** How docs/operations-commands.md names it; null for a process only the project itself starts. */
  command: string | null;
  /** Whether it reads a command line (--help, --version); the copier takes none. */
  parses: boolean;
}

const entry = (file: string, command: string | null, parses = true): EntryPoint => ({ file, command, parses });

export const ENTRY_POINTS: readonly EntryPoint[] = [
  entry('src/main.js', 'npm start'),
  entry('src/shadow/copier-process.js', null, false),
  entry('scripts/import.js', 'npm run import'),
  entry('scripts/outbox.js', 'npm run outbox'),
  entry('scripts/shadow-report.js', 'npm run shadow-report'),
  entry('scripts/audit.js', 'npm run audit'),
  entry('scripts/try-nginx.js', 'npm run try-nginx'),
  entry('scripts/gen-students.js', 'node dist/scripts/gen-students.js'),
  entry('scripts/test-clients.js', 'npm run test:clients'),
  entry('scripts/fuzz.js', 'npm run fuzz'),
  entry('scripts/bench/index.js', 'npm run bench'),
  entry('scripts/bench/profile.js', 'npm run bench:profile'),
  entry('scripts/bench/soak.js', 'npm run soak'),
  entry('scripts/bench/stall.js', 'npm run bench:stall'),
  entry('scripts/compare-legacy.js', 'npm run compare-legacy'),
  entry('scripts/record-legacy.js', 'npm run record-legacy'),
  entry('scripts/differential.js', 'npm run differential'),
  entry('scripts/bench/ceiling.js', null),
  entry('scripts/bench/stand-in.js', null),
  entry('scripts/bench/node-soap-baseline.js', null),
  entry('scripts/bench/paced.js', null),
  entry('scripts/legacy/csv2tsv.js', null),
  entry('scripts/check-wsdl.js', null),
];

function sourcesUnder(dir: string): string[] {
  return fs
    .readdirSync(path.join(PROJECT_ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => path.join(dir, f));
}

/**
 * The sources that start a process, as built files: src/main.ts, what src/ spawns or forks by its
 * own file name (the copier), and every file of scripts/ that runs when it is the main module.
 */
export function entrySources(): string[] {
  // A file src/ starts is named beside its starter: path.join(__dirname, `copier-process${path.extname(__filename)}`).
  const started = sourcesUnder('src').flatMap((f) =>
    [
      ...fs
        .readFileSync(path.join(PROJECT_ROOT, f), 'utf8')
        .matchAll(/path\.join\(__dirname, `([\w-]+)\$\{path\.extname\(__filename\)\}`\)/g),
    ].map((m) => path.join(path.dirname(f), `${m[1]}.ts`)),
  );
  const src = [path.join('src', 'main.ts'), ...started];
  const scripts = sourcesUnder('scripts').filter((f) =>
    /^(if \(require\.main === module\)|runMain\()/m.test(fs.readFileSync(path.join(PROJECT_ROOT, f), 'utf8')),
  );
  return [...src, ...scripts].map((f) => f.replace(/\.ts$/, '.js')).sort();
}

/** The source of a built entry point. */
export const sourceOf = (file: string): string => path.join(PROJECT_ROOT, file.replace(/\.js$/, '.ts'));
