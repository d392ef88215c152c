/**
 * `npm audit --omit=dev`, judged: exit 1 when a production dependency has a high or critical
 * advisory, 0 when the advisory database was asked and has none. An advisory database that cannot
 * be asked (a registry mirror without the audit endpoint, no network) checked nothing, and a check
 * that cannot fail is no check: exit 3, unless the caller accepts that explicitly with
 * --allow-unchecked (then exit 0, and the run still says that nothing was checked).
 *
 *   npm run audit [-- --allow-unchecked]
 */
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { runMain } from './run-main';

const USAGE = 'usage: npm run audit [-- --allow-unchecked]';

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
  let allowUnchecked: boolean;
  try {
    allowUnchecked = parseArgs({ args: argv, options: { 'allow-unchecked': { type: 'boolean' } }, strict: true }).values['allow-unchecked'] === true;
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n${USAGE}\n`);
    return 2;
  }
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
