/**
 * `npm run bench:stall`: does a large import stall the service (issue 21, rule 2)? Imports
 * 1,000,000 students into the service's SQLite file with the import command while clients call
 * GetTokenDevice over HTTP GET (~20/s), GetStudentSchool over HTTP GET (~10/s, a different school
 * each time) and AuthCode over SOAP 1.1 (~2/s), each request timed on its own; then waits for every
 * accepted code to reach a local SMS provider. Prints max, p99 and p50 of each, and whether the
 * target holds: max < 250 ms, every request answered, every code delivered, every roster whole
 * (empty or complete: issue 30, rule 7) (exit 1 when not).
 *
 *   npm run bench:stall
 *   npm run bench:stall -- --rows 200000
 *   npm run bench:stall -- --again      the file already imported, imported again with --replace (a nightly sync)
 */
import '../../src/basics/supported-node';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { main as genStudents } from '../gen-students';
import { runMain } from '../run-main';
import { type CommandSpec, parseCommandLine } from '../../src/basics/command-line';
import { percentile } from './load';
import { buildRoot, freePort, startService, stop } from './processes';

const TARGET_MAX_MS = 250;
const GET_EVERY_MS = 50;
const ROSTER_EVERY_MS = 100;
/** gen-students' schools: student i is in school i % 1000, ShowActive '0' when i % 4 is 0. */
const SCHOOLS = 1000;
const AUTH_EVERY_MS = 500;
/** Load before and after the import, so its start and end fall inside the measured window. */
const MARGIN_MS = 1500;
const DEVICES = 1000;

interface Sample {
  ms: number;
  ok: boolean;
  /** Students in a GetStudentSchool answer. */
  students: number;
}

const agent = new http.Agent({ keepAlive: true });

/** One request, timed from its write to the answer's last byte; not answered within 30 s counts as lost. */
function call(port: number, method: 'GET' | 'POST', url: string, headers: Record<string, string>, body?: string): Promise<Sample> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: url, headers, agent, timeout: 30_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () =>
        resolve({
          ms: performance.now() - started,
          ok: res.statusCode === 200 && text.length > 0,
          students: text.split('<id_student>').length - 1,
        }),
      );
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', () => resolve({ ms: performance.now() - started, ok: false, students: 0 }));
    req.end(body);
  });
}

const authEnvelope = (code: string, phone: string) =>
  '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>' +
  `<AuthCode xmlns="http://tempuri.org/"><code>${code}</code><phone>${phone}</phone></AuthCode></soap:Body></soap:Envelope>`;

/** A stand-in SMS provider that accepts every message and counts them. */
async function provider(): Promise<{ url: string; received: () => number; close(): void }> {
  let received = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received += 1;
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"sid":"SM1"}');
    });
  });
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${port}/send`, received: () => received, close: () => server.close() };
}

function runImport(env: Record<string, string>, args: string[]): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    // As `npm run import` runs it.
    const child = spawn(process.execPath, ['--max-old-space-size=128', path.join(buildRoot, 'scripts/import.js'), ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err = (err + c.toString()).slice(-2000)));
    child.on('exit', (code) =>
      code === 0 ? resolve((performance.now() - started) / 1000) : reject(new Error(`import exited ${code}: ${err}`)),
    );
  });
}

/** A metric's value from the service's Prometheus text (0 when absent). */
const metric = (text: string, line: string): number =>
  Number(
    text
      .split('\n')
      .find((l) => l.startsWith(`${line} `))
      ?.split(' ')[1] ?? 0,
  );

async function scrape(adminPort: number): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${adminPort}/metrics`);
  return res.text();
}

const COMMAND = {
  usage: ['npm run bench:stall -- [--rows N] [--again]'],
  summary: [
    "Does a large import stall the service? Imports N students into the service's SQLite file while clients",
    'call GetTokenDevice, GetStudentSchool and AuthCode, each request timed; max < 250 ms is the target.',
  ],
  options: {
    rows: { type: 'integer', min: 1, help: 'students imported (default 1000000)' },
    again: { type: 'boolean', help: 'the file already imported, imported again with --replace (a nightly sync)' },
  },
  notes: ['exit codes: 0 the target held, 1 it did not, 2 usage'],
} as const satisfies CommandSpec;

export async function main(argv: readonly string[]): Promise<number> {
  const line = parseCommandLine(COMMAND, argv);
  if (typeof line === 'number') return line;
  const rows = line.values.rows ?? 1_000_000;
  const again = line.values.again === true;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asmx-stall-'));
  const sms = await provider();
  try {
    const students = path.join(dir, 'students.csv');
    const devices = path.join(dir, 'devices.csv');
    await genStudents([students, String(rows)]);
    fs.writeFileSync(devices, `id_device,token\n${Array.from({ length: DEVICES }, (_, i) => `dev-${i},token-${i}`).join('\n')}\n`);
    const env = { SQLITE_PATH: path.join(dir, 'stall.db'), DATABASE_URL: '', LOG_LEVEL: 'warn' };
    await runImport(env, ['--devices', devices, ...(again ? ['--students', students] : [])]);

    const adminPort = await freePort();
    const service = await startService('service', {
      ...env,
      PORT: String(await freePort()),
      ADMIN_PORT: String(adminPort),
      SMS_GATEWAY: 'http',
      SMS_HTTP_URL: sms.url,
      SMS_DEFAULT_REGION: 'IQ',
      // Every request is a different phone from one client: no limit of the service's should refuse them.
      SMS_LIMIT_PER_ADDRESS: '1000000',
      SMS_LIMIT_GLOBAL_PER_MINUTE: '1000000',
    });
    try {
      const gets: Promise<Sample>[] = [];
      const auths: Promise<Sample>[] = [];
      // A roster read during the import is whole when it is empty (the school not yet imported) or
      // complete; with --again every roster is complete before, during and after.
      const schools = Math.min(SCHOOLS, rows);
      const rosters: Promise<{ whole: boolean; sample: Sample }>[] = [];
      const rosterTimer = setInterval(() => {
        const k = (rosters.length * 7) % schools;
        const complete = Math.ceil((rows - k) / SCHOOLS);
        const url = `/NotificationNotes.asmx/GetStudentSchool?school_base_url=http://school-${k}.example&show_active=${k % 4 === 0 ? '0' : '1'}`;
        rosters.push(
          call(service.port, 'GET', url, {}).then((sample) => ({
            sample,
            whole: sample.students === complete || (!again && sample.students === 0),
          })),
        );
      }, ROSTER_EVERY_MS);
      let n = 0;
      const getTimer = setInterval(() => {
        gets.push(call(service.port, 'GET', `/PushNotificationMobile.asmx/GetTokenDevice?id=dev-${n++ % DEVICES}`, {}));
      }, GET_EVERY_MS);
      const authTimer = setInterval(() => {
        const i = auths.length;
        const body = authEnvelope(String(100000 + i), `+96477012${String(i).padStart(5, '0')}`);
        auths.push(
          call(
            service.port,
            'POST',
            '/AuthCodeSending.asmx',
            { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: '"http://tempuri.org/AuthCode"' },
            body,
          ),
        );
      }, AUTH_EVERY_MS);
      await sleep(MARGIN_MS);
      await scrape(adminPort); // prom-client's event-loop figures restart at each scrape
      const seconds = await runImport(env, ['--students', students, ...(again ? ['--replace'] : [])]);
      const during = await scrape(adminPort);
      await sleep(MARGIN_MS);
      clearInterval(getTimer);
      clearInterval(authTimer);
      clearInterval(rosterTimer);
      const getSamples = await Promise.all(gets);
      const rosterReads = await Promise.all(rosters);
      const partial = rosterReads.filter((r) => r.sample.ok && !r.whole).length;
      const authSamples = await Promise.all(auths);
      const accepted = authSamples.filter((s) => s.ok).length;
      const deadline = Date.now() + 30_000;
      while (sms.received() < accepted && Date.now() < deadline) await sleep(100);

      const fmt = (v: number) => v.toLocaleString('en-US', { maximumFractionDigits: 0 });
      const row = (name: string, samples: Sample[]) => {
        const times = samples.map((s) => s.ms).sort((a, b) => a - b);
        const answered = samples.filter((s) => s.ok).length;
        return {
          name,
          sent: samples.length,
          answered,
          p50: percentile(times, 0.5),
          p99: percentile(times, 0.99),
          max: times[times.length - 1] ?? 0,
        };
      };
      const table = [
        row('GetTokenDevice (HTTP GET, ~20/s)', getSamples),
        row(
          'GetStudentSchool (HTTP GET, ~10/s)',
          rosterReads.map((r) => r.sample),
        ),
        row('AuthCode (SOAP 1.1, ~2/s)', authSamples),
      ];
      const lines = [['', 'sent', 'answered', 'p50 ms', 'p99 ms', 'max ms']];
      for (const r of table) lines.push([r.name, String(r.sent), String(r.answered), r.p50.toFixed(1), r.p99.toFixed(1), r.max.toFixed(1)]);
      const widths = lines[0]!.map((_, i) => Math.max(...lines.map((l) => l[i]!.length)));
      const out = [
        `${fmt(rows)} students ${again ? 'imported again with --replace (every row an update)' : 'imported'} in ${seconds.toFixed(1)} s ` +
          `(SQLite, ${os.cpus().length} CPUs) while clients called the service:`,
        ...lines.map((l) => l.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')),
        `codes delivered: ${sms.received()} of ${accepted} accepted`,
        `rosters answered part old, part new: ${partial} of ${rosterReads.length}`,
        `service during the import: event-loop lag max ${fmt(metric(during, 'nodejs_eventloop_lag_max_seconds') * 1000)} ms, ` +
          `p99 ${fmt(metric(during, 'nodejs_eventloop_lag_p99_seconds') * 1000)} ms; statements that waited for the lock ` +
          `${metric(during, 'asmx_store_lock_waits_total{outcome="waited"}')}, gave up ${metric(during, 'asmx_store_lock_waits_total{outcome="gave_up"}')}`,
      ];
      const met =
        table.every((r) => r.max < TARGET_MAX_MS && r.answered === r.sent) &&
        sms.received() === accepted &&
        accepted === authSamples.length &&
        partial === 0;
      out.push(
        `target (max < ${TARGET_MAX_MS} ms, every request answered, every code delivered, every roster whole): ${met ? 'met' : 'NOT met'}`,
      );
      process.stdout.write(`${out.join('\n')}\n`);
      return met ? 0 : 1;
    } finally {
      await stop(service);
    }
  } finally {
    sms.close();
    agent.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) runMain(main);
