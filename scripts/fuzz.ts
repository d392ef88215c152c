/**
 * Fuzzes a service with mutated requests of every binding and reports what was not answered properly.
 *
 *   npm run fuzz -- --count 50000                     a service of its own (built, on a free port, demo data)
 *   npm run fuzz -- --url http://127.0.0.1:8080 ...   a running service (AuthCode left out: it texts)
 *   options: --seed N (default: the time), --concurrency N (16), --include-authcode
 *
 * Exit codes: 0 every request answered properly and the service still serving, 1 otherwise, 2 usage.
 */
import '../src/basics/supported-node';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { type CommandSpec, parseCommandLine, usageError } from '../src/basics/command-line';
import { freePort } from './free-port';
import { fuzz, type FuzzReport } from './fuzz/run';
import { runMain } from './run-main';

const COMMAND = {
  usage: ['npm run fuzz -- [--count N] [--seed N] [--concurrency N] [--url http://host:port[/base]] [--include-authcode]'],
  summary: [
    'Fuzzes a service with mutated requests of every binding and reports what was not answered properly:',
    'a service of its own (built, on a free port, with the demo data), or a running one at --url.',
  ],
  options: {
    count: { type: 'integer', min: 1, help: 'requests to send (default 5000)' },
    seed: { type: 'integer', min: 0, help: "the mutations' seed, to repeat a run (default: the time)" },
    concurrency: { type: 'integer', min: 1, help: 'requests in flight at once (default 16)' },
    url: { type: 'string', value: 'URL', help: 'a running service instead (AuthCode left out: it texts)' },
    'include-authcode': { type: 'boolean', help: 'with --url: fuzz AuthCode too' },
  },
  notes: ['exit codes: 0 every request answered properly and the service still serving, 1 otherwise, 2 usage'],
} as const satisfies CommandSpec;

async function waitUntilServing(port: number, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`the service exited with code ${child.exitCode} at start`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => resolve(true)).on('error', () => resolve(false));
      s.unref();
      setTimeout(() => s.destroy(), 200);
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the service did not start listening');
}

/** The built service on a free port over a fresh SQLite file holding the demo data. */
async function ownService(): Promise<{ port: number; child: ChildProcess; logFile: string; stop: () => void }> {
  // The build this script runs from (.dev-build/ under npm run fuzz), never dist/ by name.
  const build = path.join(__dirname, '..');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fuzz-'));
  const port = await freePort();
  const env = { ...process.env, PORT: String(port), HOST: '127.0.0.1', SQLITE_PATH: path.join(dir, 'fuzz.db'), REQUEST_TIMEOUT_MS: '1000' };
  execFileSync(process.execPath, [path.join(build, 'scripts', 'import.js'), '--demo'], { env, stdio: 'ignore' });
  // The service's log is kept beside its database, to show why it died if it does.
  const logFile = path.join(os.tmpdir(), `fuzz-service-${port}.log`);
  const log = fs.openSync(logFile, 'w');
  const child = spawn(process.execPath, [path.join(build, 'src', 'main.js')], { env, stdio: ['ignore', log, log] });
  await waitUntilServing(port, child);
  return {
    port,
    child,
    logFile,
    stop: () => {
      child.kill('SIGTERM');
      fs.closeSync(log);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

function print(report: FuzzReport, seed: number, ms: number): void {
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(`\n${report.sent} requests in ${(ms / 1000).toFixed(1)} s (seed ${seed}); answers: ${JSON.stringify(report.statuses)}`);
  for (const f of [...report.failures, ...report.afterwards].slice(0, 20)) {
    out(`FAIL ${f.name}: ${f.problems.join('; ')}\n  ${JSON.stringify(f.request)}`);
  }
  const total = report.failures.length + report.afterwards.length;
  if (total > 20) out(`... and ${total - 20} more`);
}

async function main(argv: string[]): Promise<number> {
  const line = parseCommandLine(COMMAND, argv);
  if (typeof line === 'number') return line;
  const { values } = line;
  const args = {
    count: values.count ?? 5000,
    seed: values.seed ?? Date.now() % 2 ** 31,
    concurrency: values.concurrency ?? 16,
    url: values.url,
    includeAuthCode: values['include-authcode'] === true,
  };
  if (args.url !== undefined && !/^http:\/\/[^/]/.test(args.url))
    return usageError(COMMAND, `--url takes an http:// URL, not "${args.url}"`);
  const own = args.url === undefined ? await ownService() : null;
  const target = own === null ? new URL(args.url!) : new URL(`http://127.0.0.1:${own.port}`);
  const started = Date.now();
  try {
    const report = await fuzz({
      host: target.hostname,
      port: Number(target.port || 80),
      basePath: target.pathname.replace(/\/+$/, ''),
      count: args.count,
      seed: args.seed,
      concurrency: args.concurrency,
      deadlineMs: own === null ? 35_000 : 5000,
      includeEffects: own !== null || args.includeAuthCode,
      onProgress: (done) => {
        if (process.stderr.isTTY && done % 100 === 0) process.stderr.write(`\r${done} / ${args.count}`);
        else if (done % 5000 === 0) process.stderr.write(`${done} / ${args.count}\n`);
      },
    });
    print(report, args.seed, Date.now() - started);
    const alive = own === null || own.child.exitCode === null;
    if (own !== null) {
      process.stdout.write(
        alive ? `the service (pid ${own.child.pid}) is still the one answering\n` : `the service process died: see ${own.logFile}\n`,
      );
    }
    return report.failures.length === 0 && report.afterwards.length === 0 && alive ? 0 : 1;
  } finally {
    own?.stop();
  }
}

runMain(main);
