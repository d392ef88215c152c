/**
 * `npm audit --omit=dev`, judged: exit 1 when a production dependency has a high or critical
 * advisory, 0 when the advisory database was asked and has none. An advisory database that cannot
 * be asked (a registry mirror without the audit endpoint, no network) checked nothing, and a check
 * that cannot fail is no check: exit 3, unless the caller accepts that explicitly with
 * --allow-unchecked (then exit 0, and the run still says that nothing was checked).
 *
 *   npm run audit [-- --allow-unchecked]
 */
import '../src/basics/supported-node';
import { spawnSync } from 'node:child_process';
import { type CommandSpec, parseCommandLine } from '../src/basics/command-line';
import { runMain } from './run-main';

const COMMAND = {
  usage: ['npm run audit [-- --allow-unchecked]'],
  summary: ['`npm audit --omit=dev`, judged: fails when a production dependency has a high or critical advisory.'],
  options: {
    'allow-unchecked': {
      type: 'boolean',
      help: 'exit 0 when the advisory database could not be asked (the warning still says nothing was checked)',
    },
  },
  notes: [
    'exit codes: 0 no high or critical advisory, 1 one or more, 2 usage, 3 the advisory database could not be asked: nothing was checked',
  ],
} as const satisfies CommandSpec;

/** The exit code of a run that could not ask the advisory database (and was not told to accept it). */
const UNCHECKED_EXIT = 3;

interface AuditReport {
  statusCode?: number;
  message?: string;
  metadata?: { vulnerabilities?: Record<string, number> };
}

/** One line for a failure of npm's: its message without the registry's headers and body. */
const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim().slice(0, 300);

async function main(argv: string[]): Promise<number> {
  const line = parseCommandLine(COMMAND, argv);
  if (typeof line === 'number') return line;
  const allowUnchecked = line.values['allow-unchecked'] === true;
  const unchecked = (why: string): number => {
    if (allowUnchecked) {
      process.stderr.write(`warning: ${why}; nothing was checked (accepted: --allow-unchecked)\n`);
      return 0;
    }
    process.stderr.write(`error: ${why}; nothing was checked (--allow-unchecked accepts that)\n`);
    return UNCHECKED_EXIT;
  };
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const run = spawnSync(npm, ['audit', '--omit=dev', '--json'], { encoding: 'utf8' });
  let report: AuditReport;
  try {
    report = JSON.parse(run.stdout) as AuditReport;
  } catch {
    return unchecked(`npm audit gave no report (exit ${run.status ?? run.error?.message})`);
  }
  const counts = report.metadata?.vulnerabilities;
  if (counts === undefined) return unchecked(`the advisory database could not be asked (${oneLine(report.message ?? 'no details')})`);
  const serious = (counts.high ?? 0) + (counts.critical ?? 0);
  process.stdout.write(`npm audit --omit=dev: ${JSON.stringify(counts)}\n`);
  return serious > 0 ? 1 : 0;
}

runMain(main);
