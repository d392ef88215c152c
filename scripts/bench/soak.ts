/**
 * `npm run soak -- --minutes 10`: the service (SQLite, the benchmark's data set) under a steady load
 * at 70% of the maximum it just measured, with every operation in the mix. Reports, per minute, the
 * rate, errors and p99, and the heap after a full GC at the start and the end. Exits 1 when any
 * request failed or the heap grew by more than 10%.
 */
import '../../src/basics/supported-node';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sqliteStore, writeCsv } from './data';
import { drive } from './load';
import { freePort, type Started, startService, stop } from './processes';
import { type BenchRequest, WORKLOADS } from './workloads';
import { runMain } from '../run-main';
import { type CommandSpec, parseCommandLine } from '../../src/basics/command-line';

const COMMAND = {
  usage: ['npm run soak -- [--minutes N]'],
  summary: [
    'The service (SQLite, the benchmark data set) under a steady load at 70% of the maximum it just measured,',
    'every operation in the mix: per minute the rate, errors and p99, and the heap after a full GC at the start and the end.',
  ],
  options: { minutes: { type: 'integer', min: 1, help: 'how long (default 10)' } },
  notes: ['exit codes: 0 no request failed and the heap grew by 10% or less, 1 otherwise, 2 usage'],
} as const satisfies CommandSpec;

const NS = 'http://tempuri.org/';
const soap = (endpoint: string, op: string, inner = ''): BenchRequest => ({
  method: 'POST',
  path: `/${endpoint}.asmx`,
  headers: { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: `"${NS}${op}"` },
  body: `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><${op} xmlns="${NS}">${inner}</${op}></soap:Body></soap:Envelope>`,
});

/** Every operation, over every binding the benchmark uses, rosters up to 500 students. */
const MIX: BenchRequest[] = [
  ...WORKLOADS.filter((w) => (w.students ?? 0) <= 500).map((w) => w.request),
  soap('PushNotificationMobile', 'GetServerKeyAndSender'),
  soap('AboutUs', 'GetAboutUs'),
  soap('GetStudnetsMarks', 'GetStudentsMarks', '<StudnetID>1</StudnetID><SubjectID>2</SubjectID>'),
  { method: 'GET', path: '/AboutUs.asmx/GetAboutUs', headers: {} },
];

function heapAfterGc(p: Started): Promise<number> {
  return new Promise((resolve) => {
    p.child.once('message', (m: { heapUsed: number }) => resolve(m.heapUsed));
    p.child.send('heap?');
  });
}

export async function main(argv: readonly string[]): Promise<number> {
  const line = parseCommandLine(COMMAND, argv);
  if (typeof line === 'number') return line;
  const minutes = line.values.minutes ?? 10;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'asmx-soak-'));
  const store = await sqliteStore(dir, writeCsv(dir));
  const env = { ...store.env, PORT: String(await freePort()), ADMIN_PORT: '0', LOG_LEVEL: 'info' };
  const service = await startService('service', env, ['--expose-gc'], 'scripts/bench/gc-probe.js');
  const mb = (n: number) => `${(n / 2 ** 20).toFixed(1)} MB`;
  try {
    const max = await drive(service.port, MIX, null, { connections: 16, seconds: 10 });
    const rate = Math.round(0.7 * max.rps);
    const heapStart = await heapAfterGc(service);
    process.stdout.write(
      `maximum ${Math.round(max.rps)} req/s over ${MIX.length} requests (${max.errors} errors); soaking at ${rate} req/s for ${minutes} min; heap after GC ${mb(heapStart)}\n`,
    );
    let errors = max.errors;
    for (let minute = 1; minute <= minutes; minute++) {
      const m = await drive(service.port, MIX, null, { connections: 16, seconds: 60, rate });
      errors += m.errors;
      process.stdout.write(`minute ${minute}: ${Math.round(m.rps)} req/s, p99 ${m.p99} ms, errors ${m.errors}\n`);
    }
    const heapEnd = await heapAfterGc(service);
    const growth = (100 * (heapEnd - heapStart)) / heapStart;
    process.stdout.write(
      `heap after GC: ${mb(heapStart)} at the start, ${mb(heapEnd)} at the end (${growth >= 0 ? '+' : ''}${growth.toFixed(1)}%); errors ${errors}\n`,
    );
    const ok = errors === 0 && growth <= 10;
    process.stdout.write(ok ? 'PASS\n' : 'FAIL (errors must be 0, heap growth at most 10%)\n');
    return ok ? 0 : 1;
  } finally {
    await stop(service);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (require.main === module) runMain(main);
