/**
 * `npm audit --omit=dev`, judged: exit 1 when a production dependency has a high or critical
 * advisory. An advisory database that cannot be reached (a mirror without the audit endpoint, no
 * network) is a warning, not a pass and not a failure: the run says it checked nothing.
 *
 *   npm run audit
 */
import '../src/basics/supported-node';
import { spawnSync } from 'node:child_process';
import { type CommandSpec, parseCommandLine } from '../src/basics/command-line';
import { runMain } from './run-main';

const COMMAND = {
  usage: ['npm run audit'],
  summary: ['`npm audit --omit=dev`, judged: fails when a production dependency has a high or critical advisory.'],
  options: {},
  notes: ['exit codes: 0 no high or critical advisory (or none could be asked: the warning says nothing was checked), 1 one or more, 2 usage'],
} as const satisfies CommandSpec;

interface AuditReport {
  statusCode?: number;
  message?: string;
  metadata?: { vulnerabilities?: Record<string, number> };
}

async function main(argv: string[]): Promise<number> {
  const line = parseCommandLine(COMMAND, argv);
  if (typeof line === 'number') return line;
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const run = spawnSync(npm, ['audit', '--omit=dev', '--json'], { encoding: 'utf8' });
  let report: AuditReport;
  try {
    report = JSON.parse(run.stdout) as AuditReport;
  } catch {
    process.stderr.write(`warning: npm audit gave no report (exit ${run.status}); nothing was checked\n`);
    return 0;
  }
  const counts = report.metadata?.vulnerabilities;
  if (counts === undefined) {
    process.stderr.write(`warning: the advisory database could not be asked (${report.message ?? 'no details'}); nothing was checked\n`);
    return 0;
  }
  const serious = (counts.high ?? 0) + (counts.critical ?? 0);
  process.stdout.write(`npm audit --omit=dev: ${JSON.stringify(counts)}\n`);
  return serious > 0 ? 1 : 0;
}

runMain(main);
