// First: on an unsupported Node this stops the process in one line, before anything native loads.
import './basics/supported-node';
import cluster from 'node:cluster';
import fs from 'node:fs';
import { parseEnv } from 'node:util';
import { parseCommandLine } from './basics/command-line';
import { ConfigError, envFileWarnings, loadConfig, settingWarnings } from './config';
import { runPrimary } from './process/cluster';
import { enableClusterMetrics } from './app/metrics';
import { log, configureLog } from './basics/log';
import { serve } from './process/server';

/**
 * The last line: an exception nothing caught leaves the process in a state nobody reasoned about.
 * It is logged and the process exits, for its supervisor (the cluster primary, systemd) to replace
 * it. Every write is a transaction of its own, so nothing is left half-written.
 */
function exitOnUncaught(kind: string, error: unknown): void {
  log.error(kind, { error });
  process.exit(1);
}
process.on('uncaughtException', (e) => exitOnUncaught('uncaught exception', e));
process.on('unhandledRejection', (e) => exitOnUncaught('unhandled rejection', e));

/** Its command line: nothing but --help and --version; the settings are the environment's. */
const SERVICE_COMMAND = {
  usage: ['node --max-semi-space-size=2 dist/src/main.js   (what npm start runs)'],
  summary: [
    'The Student Information service: the five .asmx endpoints, and the admin listener.',
    'Settings come from the environment and a .env file in the working directory (README.md#configuration).',
  ],
  options: {},
  notes: [
    'exit codes: 0 stopped (SIGTERM, SIGINT, SIGHUP), every request answered; 1 a setting refused, no start, or a stop',
    'that cut requests short (SHUTDOWN_TIMEOUT_MS); 2 usage',
  ],
} as const;

/**
 * The process model. Settings come from the environment and, when there is one, a `.env` file in the
 * working directory (the environment wins). WORKERS=1 serves from this process; WORKERS>1 makes this
 * process a cluster primary that forks the workers (each runs this file again as a worker).
 */
async function main(): Promise<void> {
  const args = parseCommandLine(SERVICE_COMMAND, process.argv.slice(2));
  if (typeof args === 'number') {
    process.exitCode = args;
    return;
  }
  // Without a UTF-8 byte order mark (Notepad's), which Node's parser would read into the first name; dotenv skips it.
  const dotenv = fs.existsSync('.env') ? fs.readFileSync('.env', 'utf8').replace(/^\uFEFF/, '') : null;
  // Node's own parser; the variables already set are kept, as dotenv does.
  if (dotenv !== null) for (const [name, value] of Object.entries(parseEnv(dotenv))) process.env[name] ??= value;
  // Said once, by the process the operator started (a worker reads the same environment), and before
  // any refusal of a value: a misspelt setting or a line the parser skipped is often why another one is wrong.
  if (!cluster.isWorker) {
    const warnings = [...(dotenv === null ? [] : envFileWarnings(dotenv, '.env')), ...settingWarnings(process.env)];
    for (const line of warnings) process.stderr.write(`warning: ${line}\n`);
  }
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(`error: ${e.message}\n`);
      process.exit(1);
    }
    throw e;
  }
  configureLog(config);

  if (cluster.isWorker) {
    enableClusterMetrics();
    return serve(config, 'worker');
  }
  return config.workers > 1 ? runPrimary(config) : serve(config, 'single');
}

main().catch((e: unknown) => {
  log.error('could not start', { error: e });
  process.exit(1);
});
