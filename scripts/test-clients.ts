/**
 * The real-client suite: starts the service on a free port over a throw-away SQLite store (or the
 * PostgreSQL database of DATABASE_URL) loaded with
 * the fixture data set (test/fixtures/data), then runs each client program of test/clients/ against it.
 * Each client generates its proxies from the served ?wsdl, calls every operation on every binding it
 * supports and prints `FAIL <client> <binding> <operation>...: why` per failed check and
 * `<client>: N passed, M failed` at the end.
 *
 *   npm run test:clients                      every client
 *   npm run test:clients -- zeep php          only these
 *
 * A client whose tools are not installed is skipped, with the Debian packages to install. With
 * CLIENTS_REQUIRED=1 (set by CI) skipping any client fails the run.
 * Exit codes: 0 all ran clients passed, 1 a client failed or (CLIENTS_REQUIRED=1) one was skipped, 2 usage.
 */
import '../src/basics/supported-node';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { configureLog } from '../src/basics/log';
import { createSms } from '../src/sms';
import { fileSource, importFiles } from '../src/store/import';
import { openStore } from '../src/store/open';
import type { Store } from '../src/store/store';
import { projectRoot } from '../src/basics/paths';
import { type CommandSpec, parseCommandLine, usageError } from '../src/basics/command-line';
import { runMain } from './run-main';

const ROOT = projectRoot;
const CLIENTS_DIR = join(ROOT, 'test', 'clients');
const DATA_DIR = join(ROOT, 'test', 'fixtures', 'data');
/** A second namespace the fast clients are run against, so the WSDL's namespace is not only ever tempuri. */
const OTHER_NAMESPACE = 'http://school.example/StudentInfo';

interface ClientSpec {
  name: string;
  /** What the client is, for the summary. */
  title: string;
  bindings: string;
  /** Debian packages that provide its tools. */
  packages: string;
  /** Cheap enough to run a second time against a service with another XML namespace. */
  alsoOtherNamespace: boolean;
  timeoutMs: number;
  /** Why it cannot run here, or null when it can. */
  missing(): string | null;
  version(): string;
  command(base: string): [string, string[]];
}

/** The executable's full path if it is on PATH. */
function which(command: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const path = join(dir, command);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here
    }
  }
  return null;
}

function missingCommands(...commands: string[]): string | null {
  const absent = commands.filter((c) => which(c) === null);
  return absent.length === 0 ? null : `${absent.join(', ')} not found`;
}

function succeeds(command: string, args: string[]): boolean {
  return spawnSync(command, args, { stdio: 'ignore', timeout: 30_000 }).status === 0;
}

/** The installed Debian package's version, which is what docs/tests.md's table of clients reports. */
function debianVersion(pkg: string): string {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own format
  const r = spawnSync('dpkg-query', ['-W', '-f', '${Version}', pkg], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() !== '' ? `${pkg} ${r.stdout.trim()}` : `${pkg} (version unknown)`;
}

// Debian's python3-zeep is installed for Debian's interpreter, which need not be the first python3 on PATH.
const PYTHON = '/usr/bin/python3';
const JAXWS_RUNTIME = '/usr/share/java/jaxws-rt.jar';

const CLIENTS: readonly ClientSpec[] = [
  {
    name: 'zeep',
    title: 'python zeep',
    bindings: 'SOAP 1.1, SOAP 1.2',
    packages: 'python3-zeep',
    alsoOtherNamespace: true,
    timeoutMs: 120_000,
    missing: () => (!existsSync(PYTHON) ? `${PYTHON} not found` : succeeds(PYTHON, ['-c', 'import zeep']) ? null : 'zeep not importable'),
    version: () => debianVersion('python3-zeep'),
    command: (base) => [PYTHON, [join(CLIENTS_DIR, 'zeep_client.py'), base]],
  },
  {
    name: 'php',
    title: 'PHP SoapClient',
    bindings: 'SOAP 1.1, SOAP 1.2',
    packages: 'php-cli php-soap',
    alsoOtherNamespace: true,
    timeoutMs: 120_000,
    missing: () =>
      missingCommands('php') ??
      (succeeds('php', ['-r', 'exit(class_exists("SoapClient") ? 0 : 1);']) ? null : 'the soap extension is not loaded'),
    version: () => {
      const r = spawnSync('php', ['-r', 'echo PHP_VERSION;'], { encoding: 'utf8' });
      return `${debianVersion('php-soap')} (PHP ${r.status === 0 ? r.stdout.trim() : '?'})`;
    },
    command: (base) => ['php', [join(CLIENTS_DIR, 'php_client.php'), base]],
  },
  {
    name: 'gsoap',
    title: 'gSOAP wsdl2h + soapcpp2',
    bindings: 'SOAP 1.1, SOAP 1.2 (code generation)',
    packages: 'gsoap',
    alsoOtherNamespace: true,
    timeoutMs: 120_000,
    missing: () => missingCommands('bash', 'wsdl2h', 'soapcpp2'),
    version: () => debianVersion('gsoap'),
    command: (base) => ['bash', [join(CLIENTS_DIR, 'gsoap.sh'), base]],
  },
  {
    name: 'node-soap',
    title: 'node-soap client',
    bindings: 'SOAP 1.1, SOAP 1.2',
    packages: 'the npm dependencies (npm ci)',
    alsoOtherNamespace: true,
    timeoutMs: 120_000,
    missing: () => {
      try {
        require.resolve('soap');
      } catch {
        return 'the soap package is not installed (npm ci)';
      }
      return existsSync(nodeSoapClient()) ? null : `${nodeSoapClient()} not built (npm run build)`;
    },
    version: () => `soap ${(JSON.parse(readFileSync(require.resolve('soap/package.json'), 'utf8')) as { version: string }).version}`,
    command: (base) => [process.execPath, [nodeSoapClient(), base]],
  },
  {
    name: 'dotnet',
    title: '.NET Framework client (Mono wsdl + mcs + mono)',
    bindings: 'SOAP 1.1, SOAP 1.2, HTTP GET, HTTP POST',
    packages: 'mono-devel',
    alsoOtherNamespace: false,
    timeoutMs: 600_000,
    missing: () => missingCommands('bash', 'wsdl', 'mcs', 'mono'),
    version: () => debianVersion('mono-devel'),
    command: (base) => ['bash', [join(CLIENTS_DIR, 'dotnet', 'run.sh'), base]],
  },
  {
    name: 'java',
    title: 'Java JAX-WS (wsimport + javac + java)',
    bindings: 'SOAP 1.1, SOAP 1.2',
    packages: 'jaxws default-jdk-headless',
    alsoOtherNamespace: false,
    timeoutMs: 300_000,
    missing: () =>
      missingCommands('bash', 'wsimport', 'javac', 'java') ?? (existsSync(JAXWS_RUNTIME) ? null : `${JAXWS_RUNTIME} not found`),
    version: () => debianVersion('jaxws'),
    command: (base) => ['bash', [join(CLIENTS_DIR, 'java', 'run.sh'), base]],
  },
];

/** node-soap's client is TypeScript, compiled with the project next to this script. */
function nodeSoapClient(): string {
  return join(__dirname, '..', 'test', 'clients', 'node-soap.js');
}

/** One run of one client against one service. */
interface Outcome {
  label: string;
  client: ClientSpec;
  version: string;
  status: 'passed' | 'failed' | 'skipped';
  passed: number;
  failed: number;
  /** The client's FAIL lines, repeated after all clients ran so that CI logs show them together. */
  failures: string[];
  note: string;
  seconds: number;
}

interface Service {
  base: string;
  close(): Promise<void>;
}

/** The whole service in this process, on a free loopback port, over the shared store. */
async function startService(store: Store, sqlitePath: string, xmlNamespace: string): Promise<Service> {
  const config = loadConfig({ ...process.env, SQLITE_PATH: sqlitePath, XML_NAMESPACE: xmlNamespace, HOST: '127.0.0.1', PORT: '0' });
  // Not started: AuthCode requests are queued, never sent.
  const sms = createSms(config.sms, store);
  const app = await createApp(config, store, { intake: sms.intake });
  const server = await new Promise<Server>((resolve, reject) => {
    const s = createServer(app).listen(0, '127.0.0.1', () => resolve(s));
    s.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await sms.close();
    },
  };
}

const running = new Set<ChildProcess>();

/** Kills a client and whatever it started (wsdl, mcs, mono, java...): each runs in its own process group. */
function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/**
 * Runs one client, passing its lines through as they come, and judges it by its own summary line: a
 * client that crashes, hangs or exits without one has failed, whatever its exit status.
 */
async function runClient(client: ClientSpec, version: string, label: string, base: string): Promise<Outcome> {
  const started = Date.now();
  const [command, args] = client.command(base);
  const child = spawn(command, args, {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PYTHONIOENCODING: 'utf-8', LC_ALL: 'C.UTF-8' },
  });
  running.add(child);

  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup(child);
  }, client.timeoutMs);

  const summary = new RegExp(`^${client.name.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')}: (\\d+) passed, (\\d+) failed$`);
  // Set by the line handler; an object so that TypeScript does not narrow it to its initial null.
  const seen: { counts: { passed: number; failed: number } | null } = { counts: null };
  let pending = '';
  const stderr: string[] = [];
  const failures: string[] = [];
  const onLine = (line: string) => {
    const m = summary.exec(line);
    if (m) seen.counts = { passed: Number(m[1]), failed: Number(m[2]) };
    if (line.startsWith('FAIL ')) failures.push(line);
    process.stdout.write(`  ${line}\n`);
  };
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (pending + chunk).split('\n');
    pending = lines.pop()!;
    for (const line of lines) onLine(line.replace(/\r$/, ''));
  });
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr.push(chunk);
    // Only the end is shown, so keep the memory bounded whatever a tool prints.
    if (stderr.length > 200) stderr.splice(0, stderr.length - 200);
  });

  const code = await new Promise<number | null>((resolve) => {
    child.once('error', (err) => {
      stderr.push(`${err.message}\n`);
      resolve(null);
    });
    child.once('close', (status) => resolve(status));
  });
  clearTimeout(timer);
  running.delete(child);
  if (pending !== '') onLine(pending);

  const seconds = (Date.now() - started) / 1000;
  const outcome = { label, client, version, seconds, failures };
  const c = seen.counts;
  const tail = () =>
    stderr
      .join('')
      .trim()
      .split('\n')
      .slice(-5)
      .map((l) => `    ${l}`)
      .join('\n');
  const broken = (why: string): Outcome => {
    // Named as the clients name their failures, so a search for the client's FAIL lines finds it.
    failures.push(`FAIL ${client.name} (every operation): ${why}`);
    process.stdout.write(`  ${failures.at(-1)!}\n`);
    if (stderr.length > 0) process.stdout.write(`${tail()}\n`);
    return { ...outcome, status: 'failed', passed: c?.passed ?? 0, failed: (c?.failed ?? 0) + 1, note: why };
  };

  if (timedOut) return broken(`timed out after ${client.timeoutMs / 1000} s`);
  if (c === null) return broken(`exited with ${code === null ? 'an error' : `status ${code}`} without a summary line`);
  if (c.passed + c.failed === 0) return broken('ran no checks');
  if (c.failed === 0 && code !== 0) return broken(`reported no failure but exited with status ${code}`);
  if (c.failed > 0 && stderr.length > 0) process.stdout.write(`${tail()}\n`);
  return { ...outcome, status: c.failed === 0 ? 'passed' : 'failed', passed: c.passed, failed: c.failed, note: '' };
}

function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

const COMMAND = {
  usage: ['npm run test:clients [-- CLIENT...]'],
  summary: [
    'The real-client suite: each client program of test/clients/ generates its proxies from the served ?wsdl',
    'of a throw-away service and calls every operation on every binding it supports (every client, or these).',
  ],
  options: {},
  positionals: ['[CLIENT...]'],
  notes: [
    `clients: ${CLIENTS.map((c) => c.name).join(', ')}`,
    'exit codes: 0 all ran clients passed, 1 a client failed or (CLIENTS_REQUIRED=1) one was skipped, 2 usage',
  ],
} as const satisfies CommandSpec;

async function main(args: readonly string[]): Promise<number> {
  const line = parseCommandLine(COMMAND, args);
  if (typeof line === 'number') return line;
  const argv = line.positionals;
  const unknown = argv.filter((a) => !CLIENTS.some((c) => c.name === a));
  if (unknown.length > 0) return usageError(COMMAND, `unknown client ${unknown.join(', ')}`);
  const selected = argv.length === 0 ? CLIENTS : CLIENTS.filter((c) => argv.includes(c.name));
  const required = process.env.CLIENTS_REQUIRED === '1';
  // The service logs every request on stderr; here its answers are what is under test.
  configureLog(loadConfig({ LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' }));

  const dir = mkdtempSync(join(tmpdir(), 'student-info-clients-'));
  const sqlitePath = join(dir, 'clients.db');
  // DATABASE_URL, when set, puts the service on that PostgreSQL database (the fixture rows are upserted into it).
  const store = await openStore(loadConfig({ ...process.env, SQLITE_PATH: sqlitePath }));
  const services: Service[] = [];
  const cleanUp = async () => {
    for (const child of running) killGroup(child);
    await Promise.all(services.map((s) => s.close()));
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  };
  const interrupted = () => {
    void cleanUp().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);

  const outcomes: Outcome[] = [];
  try {
    const fixture = (name: string) => fileSource(name, join(DATA_DIR, name));
    await importFiles({ students: fixture('students.csv'), devices: fixture('devices.csv') }, { delimiter: ',', replace: false }, () =>
      store.beginImport(),
    );

    const primary = await startService(store, sqlitePath, 'http://tempuri.org/');
    services.push(primary);
    process.stdout.write(`service at ${primary.base} (store ${store.location}, fixture data from test/fixtures/data)\n`);

    let other: Service | null = null;
    const suiteStart = Date.now();
    for (const client of selected) {
      const why = client.missing();
      if (why !== null) {
        process.stdout.write(`\n== ${client.name}: ${client.title}\n  SKIP ${client.name}: install ${client.packages} (${why})\n`);
        outcomes.push({
          label: client.name,
          client,
          version: '-',
          status: 'skipped',
          passed: 0,
          failed: 0,
          failures: [],
          note: why,
          seconds: 0,
        });
        continue;
      }
      const version = client.version();
      process.stdout.write(`\n== ${client.name}: ${client.title}, ${version}, ${client.bindings}\n`);
      outcomes.push(await runClient(client, version, client.name, primary.base));
      if (client.alsoOtherNamespace) {
        other ??= await startService(store, sqlitePath, OTHER_NAMESPACE);
        if (!services.includes(other)) services.push(other);
        process.stdout.write(`== ${client.name} again, service with XML_NAMESPACE=${OTHER_NAMESPACE}\n`);
        outcomes.push(await runClient(client, version, `${client.name} (other namespace)`, other.base));
      }
    }

    process.stdout.write('\n');
    const failures = outcomes.flatMap((o) => o.failures.map((line) => (o.label === o.client.name ? line : `${line} [${o.label}]`)));
    if (failures.length > 0) process.stdout.write(`failures:\n${failures.map((line) => `  ${line}\n`).join('')}\n`);
    const rows: string[][] = [['client', 'version', 'bindings', 'result', 'time']];
    for (const o of outcomes) {
      const result =
        o.status === 'skipped'
          ? `SKIPPED: install ${o.client.packages}`
          : `${o.status === 'passed' ? 'passed' : 'FAILED'} (${o.passed} passed, ${o.failed} failed)${o.note ? `: ${o.note}` : ''}`;
      rows.push([o.label, o.version, o.client.bindings, result, o.status === 'skipped' ? '-' : `${o.seconds.toFixed(1)} s`]);
    }
    process.stdout.write(`${table(rows)}\n\n`);

    const skippedButRequired = required ? outcomes.filter((o) => o.status === 'skipped') : [];
    for (const o of skippedButRequired) {
      process.stdout.write(`error: ${o.label} was skipped but CLIENTS_REQUIRED=1: install ${o.client.packages}\n`);
    }
    const total = (key: 'passed' | 'failed') => outcomes.reduce((n, o) => n + o[key], 0);
    const skipped = outcomes.filter((o) => o.status === 'skipped').length;
    process.stdout.write(`time: ${((Date.now() - suiteStart) / 1000).toFixed(1)} s\n`);
    process.stdout.write(`clients: ${total('passed')} passed, ${total('failed')} failed, ${skipped} skipped\n`);
    return outcomes.some((o) => o.status === 'failed') || skippedButRequired.length > 0 ? 1 : 0;
  } finally {
    process.removeListener('SIGINT', interrupted);
    process.removeListener('SIGTERM', interrupted);
    await cleanUp();
  }
}

runMain(main);
