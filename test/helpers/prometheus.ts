import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, PROJECT_ROOT } from './service';

/**
 * Debian's Prometheus for the tests: promtool on deploy/prometheus, and a real `prometheus` run from
 * the example configuration (deploy/prometheus/prometheus.yml, its alert rules beside it) made to
 * scrape a test's service every second. jest.config.js finds both programs (TEST_PROMETHEUS,
 * TEST_PROMTOOL) and says before the run when they are missing.
 */
export const PROMETHEUS = process.env.TEST_PROMETHEUS || undefined;
export const PROMTOOL = process.env.TEST_PROMTOOL || undefined;
export const DEPLOY = path.join(PROJECT_ROOT, 'deploy', 'prometheus');
/** The scrape job the example configuration names and the alert rules select. */
export const JOB = 'student-info-service';

/** promtool run in deploy/prometheus: its exit status and everything it wrote. */
export function promtool(...args: string[]): { status: number | null; output: string } {
  const r = spawnSync(PROMTOOL!, args, { cwd: DEPLOY, encoding: 'utf8' });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/** What /api/v1/query answers (https://prometheus.io/docs/prometheus/latest/querying/api/). */
export interface QueryAnswer {
  status: 'success' | 'error';
  error?: string;
  data?: { resultType: string; result: unknown };
}
export interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

export interface Prometheus {
  base: string;
  /** An HTTP API answer, parsed (errors too: Prometheus answers them in JSON). */
  api<T>(pathAndQuery: string): Promise<T>;
  /** An instant query, at `time` (seconds) or now. */
  query(expr: string, time?: number): Promise<QueryAnswer>;
  /** What it wrote to stderr, for a failure's message. */
  log(): string;
  stop(): Promise<void>;
}

/** Asks `condition` every 250 ms until it holds; fails naming `what` after `timeoutMs`. */
export async function poll(what: string, condition: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Replaces `from` by `to` in `text`, failing when the example no longer says `from`. */
function edit(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`deploy/prometheus/prometheus.yml no longer says ${from}`);
  return text.replaceAll(from, to);
}

/** Prometheus from the example configuration, scraping and evaluating every second, its target `127.0.0.1:adminPort`. */
export async function startPrometheus(adminPort: number): Promise<Prometheus> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'student-info-prometheus-'));
  let config = fs.readFileSync(path.join(DEPLOY, 'prometheus.yml'), 'utf8');
  config = edit(config, 'scrape_interval: 15s', 'scrape_interval: 1s');
  config = edit(config, 'evaluation_interval: 15s', 'evaluation_interval: 1s');
  config = edit(config, "targets: ['127.0.0.1:9464']", `targets: ['127.0.0.1:${adminPort}']`);
  fs.writeFileSync(path.join(dir, 'prometheus.yml'), config);
  // rule_files are read relative to the configuration: the rules as committed, beside it.
  fs.copyFileSync(path.join(DEPLOY, 'alerts.yml'), path.join(dir, 'alerts.yml'));
  const port = await freePort();
  const proc: ChildProcess = spawn(
    PROMETHEUS!,
    [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const base = `http://127.0.0.1:${port}`;
  const api = async <T>(pathAndQuery: string): Promise<T> => (await (await fetch(base + pathAndQuery)).json()) as T;
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    await exited;
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await poll('Prometheus is ready', async () => {
      if (proc.exitCode !== null) throw new Error(`prometheus exited (${proc.exitCode}):\n${stderr}`);
      return fetch(`${base}/-/ready`).then(
        (r) => r.status === 200,
        () => false,
      );
    });
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    base,
    api,
    query: (expr, time) =>
      api<QueryAnswer>(`/api/v1/query?${new URLSearchParams({ query: expr, ...(time === undefined ? {} : { time: String(time) }) })}`),
    log: () => stderr,
    stop,
  };
}
