import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileSource, importFiles } from '../../src/store/import';
import { openSqliteStore } from '../../src/store/sqlite';
import { runnableAs } from './other-user';
import { MAIN } from './paths';
import { withTestSettings } from './settings';

export { BUILD_DIR, MAIN, PROJECT_ROOT } from './paths';

export type LogLine = Record<string, unknown> & { msg: string; level: string; pid: number };

/** A service process started from the build, with its stderr read as JSON log lines. */
export interface Service {
  proc: ChildProcess;
  port: number;
  adminPort: number;
  dir: string;
  dbPath: string;
  lines: LogLine[];
  /** Every stderr line as written, JSON or not (for its length). */
  raw: string[];
  /** Raw stderr lines that are not JSON (the one-line start-up errors). */
  text: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the first log line that satisfies `test` (already seen or yet to come). */
  waitFor(test: (l: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  kill(): void;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** A fresh directory with a store loaded with the test data set (or empty, or with `create` false none yet). */
export async function storeDir(load = true, create = true): Promise<{ dir: string; dbPath: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'student-info-ops-'));
  const dbPath = path.join(dir, 'data', 'service.db');
  if (!create) return { dir, dbPath };
  const store = openSqliteStore(dbPath);
  if (load) {
    const fixture = (name: string) => fileSource(name, path.join(__dirname, '..', 'fixtures', 'data', name));
    await importFiles({ students: fixture('students.csv'), devices: fixture('devices.csv') }, { delimiter: ',', replace: false }, () =>
      store.beginImport(),
    );
  }
  await store.close();
  return { dir, dbPath };
}

export interface StartOptions {
  /** Added to (or, with undefined, removed from) the defaults: PORT=0, HOST=127.0.0.1, a free ADMIN_PORT, the store, LOG_LEVEL=info; withTestSettings. */
  env?: Record<string, string | undefined>;
  /** Working directory (default: the store's directory). */
  cwd?: string;
  load?: boolean;
  /** No database file yet: the service creates it (default false). */
  fresh?: boolean;
  /** Wait for the start line (default true). */
  waitListening?: boolean;
  /** What to run instead of `node <build>/src/main.js`. */
  command?: string[];
  /** Run as this user and group (needs root): the store's directory is handed to it first. */
  uid?: number;
  /** Called with the store's directory and file before the service starts (e.g. to break them). */
  prepare?(dir: string, dbPath: string): void;
}

export async function startService(options: StartOptions = {}): Promise<Service> {
  const { dir, dbPath } = await storeDir(options.load ?? true, !(options.fresh ?? false));
  if (options.uid !== undefined)
    for (const p of [dir, path.dirname(dbPath), dbPath]) if (fs.existsSync(p)) fs.chownSync(p, options.uid, options.uid);
  options.prepare?.(dir, dbPath);
  // The admin port is one that was free a moment ago, unless the test names it: a suite running
  // beside this one may take it in between, which the service refuses in one line; another is then
  // chosen (the service's own port is 0, chosen by the kernel as it listens).
  const chosen = !Object.hasOwn(options.env ?? {}, 'ADMIN_PORT');
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    PORT: '0',
    HOST: '127.0.0.1',
    SQLITE_PATH: dbPath,
    LOG_LEVEL: 'info',
  };
  for (const [k, v] of Object.entries(options.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  for (let attempt = 1; ; attempt += 1) {
    const adminPort = await freePort();
    if (chosen) env.ADMIN_PORT = String(adminPort);
    try {
      return await launch(options, env, { dir, dbPath, adminPort });
    } catch (e) {
      const taken = new RegExp(`port ${adminPort} is in use on [^ ]+ \\(ADMIN_PORT\\)`).test(String(e));
      if (!chosen || !taken || attempt === 5) throw e;
    }
  }
}

/** Starts the service with `env` and, unless told not to, waits until it listens. */
async function launch(
  options: StartOptions,
  env: Record<string, string>,
  { dir, dbPath, adminPort }: { dir: string; dbPath: string; adminPort: number },
): Promise<Service> {
  // Another user runs what it can read: the checkout, or a copy of it (other-user.ts).
  const asOther = options.uid === undefined ? null : runnableAs(options.uid);
  const [command, ...args] =
    options.command ?? (asOther === null ? [process.execPath, MAIN] : [asOther.node, path.join(asOther.build, 'src', 'main.js')]);
  const user = options.uid === undefined ? {} : { uid: options.uid, gid: options.uid };
  const proc = spawn(command!, args, { cwd: options.cwd ?? dir, env: withTestSettings(env), stdio: ['ignore', 'ignore', 'pipe'], ...user });
  const lines: LogLine[] = [];
  const raw: string[] = [];
  const text: string[] = [];
  const waiters: (() => void)[] = [];
  let buffered = '';
  // Ends when every process holding it has exited (under npm start, node outlives npm).
  let stderrOpen = true;
  proc.stderr!.once('close', () => {
    stderrOpen = false;
    for (const w of waiters.splice(0)) w();
  });
  proc.stderr!.setEncoding('utf8');
  proc.stderr!.on('data', (chunk: string) => {
    buffered += chunk;
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      raw.push(line);
      try {
        lines.push(JSON.parse(line) as LogLine);
      } catch {
        text.push(line);
      }
    }
    for (const w of waiters.splice(0)) w();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once('exit', (code, signal) => {
      for (const w of waiters.splice(0)) w();
      resolve({ code, signal });
    }),
  );
  // Long enough to fail only a hang: a start on a loaded machine (WORKERS=2 on PostgreSQL beside
  // the other suites) once took longer than the 15 s this was.
  const waitFor = (test: (l: LogLine) => boolean, timeoutMs = 45_000) =>
    new Promise<LogLine>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no such log line; got:\n${[...text, ...lines.map((l) => JSON.stringify(l))].join('\n')}`)),
        timeoutMs,
      );
      const check = () => {
        const found = lines.find(test);
        if (found) {
          clearTimeout(timer);
          return resolve(found);
        }
        if ((proc.exitCode !== null || proc.signalCode !== null) && !stderrOpen) {
          clearTimeout(timer);
          return reject(new Error(`exited; stderr:\n${[...text, ...lines.map((l) => JSON.stringify(l))].join('\n')}`));
        }
        waiters.push(check);
      };
      check();
    });
  let port = 0;
  if (options.waitListening ?? true) {
    const start = await waitFor((l) => l.msg.startsWith('listening on '));
    port = Number(/^listening on [^ ]*:(\d+)/.exec(start.msg)![1]);
    if ((env.ADMIN_PORT ?? '') !== '0') await waitFor((l) => l.msg === 'admin listener');
  }
  return { proc, port, adminPort, dir, dbPath, lines, raw, text, exited, waitFor, kill: () => proc.kill('SIGKILL') };
}

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export function request(
  port: number,
  pathAndQuery: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; agent?: http.Agent | false; localAddress?: string } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: pathAndQuery,
        method: init.method ?? 'GET',
        headers: init.headers,
        agent: init.agent ?? false,
        localAddress: init.localAddress,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

export const TOKEN_PATH = '/PushNotificationMobile.asmx/GetTokenDevice?id=dev-1001';
const TOKEN_SOAP =
  '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><GetTokenDevice xmlns="http://tempuri.org/"><id>dev-1001</id></GetTokenDevice></soap:Body></soap:Envelope>';

/** GetTokenDevice for dev-1001 over HTTP GET or SOAP 1.1, on `agent` (false: a new connection), under a virtual directory `prefix`. */
export function tokenRequest(port: number, soap: boolean, agent: http.Agent | false = false, prefix = ''): Promise<Reply> {
  if (!soap) return request(port, prefix + TOKEN_PATH, { agent });
  return request(port, `${prefix}/PushNotificationMobile.asmx`, {
    agent,
    method: 'POST',
    headers: { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: '"http://tempuri.org/GetTokenDevice"' },
    body: TOKEN_SOAP,
  });
}

/** The whole answer of tokenRequest: 200 with the device's token. */
export const isToken = (r: Reply): boolean => r.status === 200 && r.body.includes('fcm:APA91bH-token-1001');

export interface LoadResult {
  ok: number;
  okAfterSignal: number;
  refused: number;
  failures: string[];
}

/**
 * Steady load on loopback from `clients` keep-alive connections (or, `fresh`, a new connection for
 * each request), each sending its next request as soon as the last is answered, until the server
 * refuses new connections (it has stopped listening).
 * `signal` is called once `signalAfterOk` requests have been answered (a count, not a time: a loaded
 * machine only makes the run longer). A refused connection is the end of the run, not a failure;
 * anything else that is not a full 200 answer is one.
 */
export async function steadyLoad(
  port: number,
  clients: number,
  signalAfterOk: number,
  signal: () => void,
  fresh = false,
): Promise<LoadResult> {
  const result: LoadResult = { ok: 0, okAfterSignal: 0, refused: 0, failures: [] };
  let signalled = false;
  const answered = () => {
    result.ok += 1;
    if (signalled) result.okAfterSignal += 1;
    else if (result.ok >= signalAfterOk) {
      signalled = true;
      signal();
    }
  };
  const loop = async (i: number) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let n = 0; ; n += 1) {
        const sentAfterSignal = signalled;
        try {
          const r = await tokenRequest(port, (i + n) % 2 === 1, fresh ? false : agent);
          if (!isToken(r)) result.failures.push(`status ${r.status}: ${r.body.slice(0, 200)}`);
          else answered();
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          if (code === 'ECONNREFUSED' && signalled) {
            result.refused += 1;
            return;
          }
          result.failures.push(`${code ?? String(e)}${sentAfterSignal ? ' (sent after the signal)' : ''}`);
          if (result.failures.length > 20) return;
        }
      }
    } finally {
      agent.destroy();
    }
  };
  await Promise.all(Array.from({ length: clients }, (_, i) => loop(i)));
  return result;
}

/**
 * startService for a test file: each service started is killed after the test that started it
 * (unless it has exited already), so a failing test leaves no process behind.
 */
export function servicesPerTest(): (...args: Parameters<typeof startService>) => Promise<Service> {
  const started: Service[] = [];
  afterEach(() => {
    for (const s of started.splice(0)) if (s.proc.exitCode === null && s.proc.signalCode === null) s.kill();
  });
  return async (...args) => {
    const s = await startService(...args);
    started.push(s);
    return s;
  };
}
