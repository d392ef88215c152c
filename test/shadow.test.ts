import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import client from 'prom-client';
import { ask, type Case } from '../scripts/legacy/ask';
import { format, summarise } from '../scripts/shadow-report';
import type { Answer } from '../src/shadow/compare';
import { copyRule } from '../src/shadow/copy-rule';
import { latestDifferences } from '../src/console/differences';
import { maskText as mask } from '../src/basics/mask';
import type { DifferenceLine } from '../src/shadow/report';
import { createTestApp, FIXTURES, type TestApp } from './helpers/app';

/**
 * Shadow traffic end to end: this service copying to a second instance of itself standing in for the
 * legacy host (same data, other data, hanging, refusing), the legacy-first front, what is never
 * copied (AuthCode), and what the differences log keeps.
 */

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'shadow-test-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The fixture data with one device token and one student's name changed. */
function otherData(): string {
  const dir = path.join(tmp, 'other-data');
  fs.mkdirSync(dir, { recursive: true });
  const read = (name: string) => fs.readFileSync(path.join(FIXTURES, 'data', name), 'utf8');
  fs.writeFileSync(path.join(dir, 'devices.csv'), read('devices.csv').replace('fcm:APA91bH-token-1001', 'fcm:changed-1001'));
  fs.writeFileSync(path.join(dir, 'students.csv'), read('students.csv').replace('Ali Hassan', 'Ali Hasan'));
  return dir;
}

interface Running {
  base: string;
  t: TestApp;
  close(): Promise<void>;
}

const running: Running[] = [];
/**
 * After each test, not at the end: closing an instance settles its copies or counts them dropped,
 * so that none still in flight (under load, late) is counted in the next test's outcomes.
 */
afterEach(async () => {
  for (const r of running.splice(0).reverse()) await r.close();
});

/**
 * A legacy host that refuses every connection. Not a port just closed: under parallel suites that
 * port can be taken again at once, or be the ephemeral port the copy itself connects from (a TCP
 * self-connection that echoes the request back); seen as a copy that never settled. Port 1 is
 * below the ephemeral range and nothing here listens on it.
 */
const REFUSING = 'http://127.0.0.1:1';

async function listen(handler: http.RequestListener): Promise<{ base: string; server: http.Server }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** An instance of the service, listening; with SHADOW_* settings it shadows. */
async function start(env: Record<string, string> = {}, data?: string): Promise<Running> {
  const t = await createTestApp({ LOG_LEVEL: 'silent', ...env }, data);
  const { base, server } = await listen(t.listener);
  const r = {
    base,
    t,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await t.close();
    },
  };
  running.push(r);
  return r;
}

let logs = 0;
const logFile = () => path.join(tmp, `differences-${++logs}.jsonl`);
/**
 * The log's whole lines. The log is written asynchronously, and a reader can see a long line half
 * written (seen: a 500-student line cut at 128 KiB): what follows the last newline is not a line yet.
 */
const readLog = (file: string): DifferenceLine[] =>
  fs.existsSync(file)
    ? fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .slice(0, -1)
        .map((l) => JSON.parse(l) as DifferenceLine)
    : [];

/** The log's lines once there are `n` of them: a line is written (asynchronously) after its count. */
async function logLines(file: string, n: number): Promise<DifferenceLine[]> {
  for (let i = 0; i < 500 && readLog(file).length < n; i++) await new Promise((r) => setTimeout(r, 10));
  return readLog(file);
}

type Outcomes = Record<string, number>;
/** The shadow counters, summed by outcome (or by `operation binding outcome`). */
async function outcomes(byOperation = false): Promise<Outcomes> {
  const metric = client.register.getSingleMetric('asmx_shadow_exchanges_total')!;
  const out: Outcomes = {};
  for (const v of (await metric.get()).values) {
    const key = byOperation ? `${v.labels.operation} ${v.labels.binding} ${v.labels.outcome}` : String(v.labels.outcome);
    out[key] = (out[key] ?? 0) + v.value;
  }
  return out;
}
const delta = (after: Outcomes, before: Outcomes) =>
  Object.fromEntries(
    Object.entries(after)
      .filter(([k, v]) => v !== (before[k] ?? 0))
      .map(([k, v]) => [k, v - (before[k] ?? 0)]),
  );

/** Waits (polling) until the shadow counters have moved by `expected` in all; copies settle after the client's answer. */
async function settled(before: Outcomes, expected: number, byOperation = false): Promise<Outcomes> {
  for (let i = 0; i < 1000; i++) {
    const d = delta(await outcomes(byOperation), before);
    if (Object.values(d).reduce((a, b) => a + b, 0) >= expected) return d;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`the shadow counters never moved by ${expected}: ${JSON.stringify(delta(await outcomes(byOperation), before))}`);
}

const NS = 'http://tempuri.org/';
const soap11 = (p: string, op: string, inner: string): Case => ({
  name: op,
  method: 'POST',
  path: p,
  kind: 'full',
  headers: { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: `"${NS}${op}"` },
  body: `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><${op} xmlns="${NS}">${inner}</${op}></soap:Body></soap:Envelope>`,
});
const get = (p: string): Case => ({ name: p, method: 'GET', path: p, kind: 'full', headers: {} });
const post = (p: string, body: string): Case => ({
  name: p,
  method: 'POST',
  path: p,
  kind: 'full',
  headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  body,
});

const TOKEN_1001 = [
  soap11('/PushNotificationMobile.asmx', 'GetTokenDevice', '<id>dev-1001</id>'),
  get('/PushNotificationMobile.asmx/GetTokenDevice?id=dev-1001'),
  post('/PushNotificationMobile.asmx/GetTokenDevice', 'id=dev-1001'),
];
const UNCHANGED = [
  get('/PushNotificationMobile.asmx/GetTokenDevice?id=dev-1002'),
  get('/AboutUs.asmx?wsdl'),
  get('/AboutUs.asmx/GetAboutUs'),
];
const AUTH_CODE = [
  soap11('/AuthCodeSending.asmx', 'AuthCode', '<code>4821</code><phone>+9647701234567</phone>'),
  get('/AuthCodeSending.asmx/AuthCode?code=4821&phone=%2B9647701234567'),
  post('/AuthCodeSending.asmx/AuthCode', 'code=4821&phone=%2B9647701234567'),
];

interface Corpus {
  cases: Array<Case & { legacy: Answer }>;
}

describe('service-first', () => {
  test('against an identical instance, the recorded requests show no difference (addresses differing only by host are equal)', async () => {
    const legacy = await start();
    const log = logFile();
    const ours = await start({ SHADOW_URL: `${legacy.base}/`, SHADOW_LOG: log });
    const corpus = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'legacy', 'root-tempuri-all.json'), 'utf8')) as Corpus;
    // Every third case (routing, lenient parsing, faults, pages, encodings, methods), to stay quick.
    const cases = corpus.cases.filter((_c, i) => i % 3 === 0);
    const mayCopy = copyRule('', new Set());
    const copied = cases.filter((c) => mayCopy({ method: c.method, url: c.path }));
    expect(copied.length).toBeGreaterThan(150);
    expect(cases.some((c) => c.path.endsWith('?wsdl'))).toBe(true);
    const before = await outcomes();
    for (let i = 0; i < cases.length; i += 8) await Promise.all(cases.slice(i, i + 8).map((c) => ask(ours.base, c, false)));
    const d = await settled(before, copied.length);
    expect(readLog(log).map((l) => [l.request, l.differences])).toEqual([]);
    expect(fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '').toBe('');
    expect(d).toEqual({ match: copied.length });
  });

  test('against an instance with other data, exactly the changed answers are reported, and clients get ours', async () => {
    const legacy = await start({}, otherData());
    const log = logFile();
    const ours = await start({ SHADOW_URL: `${legacy.base}/`, SHADOW_LOG: log });
    const school = soap11(
      '/NotificationNotes.asmx',
      'GetStudentSchool',
      '<school_base_url>http://alnoor.school.example</school_base_url><show_active>49</show_active>',
    );
    const before = await outcomes(true);
    const answers = await Promise.all([...TOKEN_1001, school, ...UNCHANGED].map((c) => ask(ours.base, c, false)));
    expect(answers.slice(0, 3).map((a) => a.body)).toEqual([
      expect.stringContaining('fcm:APA91bH-token-1001'),
      expect.stringContaining('fcm:APA91bH-token-1001'),
      expect.stringContaining('fcm:APA91bH-token-1001'),
    ]);
    expect(answers[3].body).toContain('Ali Hassan');

    expect(await settled(before, 7, true)).toEqual({
      'GetTokenDevice soap11 difference': 1,
      'GetTokenDevice httpget difference': 1,
      'GetTokenDevice httppost difference': 1,
      'GetStudentSchool soap11 difference': 1,
      'GetTokenDevice httpget match': 1,
      ' documentation match': 1,
      'GetAboutUs httpget match': 1,
    });
    const lines = await logLines(log, 4);
    expect(lines.map((l) => `${l.operation} ${l.binding}`).sort()).toEqual([
      'GetStudentSchool soap11',
      'GetTokenDevice httpget',
      'GetTokenDevice httppost',
      'GetTokenDevice soap11',
    ]);
    const get1001 = lines.find((l) => l.binding === 'httpget')!;
    expect(get1001).toMatchObject({
      mode: 'service-first',
      endpoint: 'PushNotificationMobile',
      request: { method: 'GET', url: '/PushNotificationMobile.asmx/GetTokenDevice?id=dev-1001' },
      legacy: { status: 200, body: expect.stringContaining('fcm:changed-1001') },
      ours: { status: 200, body: expect.stringContaining('fcm:APA91bH-token-1001') },
      differences: [
        { kind: 'body text of /string', detail: 'body /string text: legacy "fcm:changed-1001" vs ours "fcm:APA91bH-token-1001"' },
      ],
    });
    expect(get1001.requestId).toMatch(/^[0-9a-f-]{36}$/);
    const soap = lines.find((l) => l.operation === 'GetStudentSchool')!;
    expect(soap.request.headers).toEqual({ 'content-type': 'text/xml; charset=utf-8', soapaction: `"${NS}GetStudentSchool"` });
    expect(soap.differences.map((d) => d.kind)).toEqual([
      'body text of /soap:Envelope/soap:Body/GetStudentSchoolResponse/GetStudentSchoolResult/StudentInfo/fullName',
    ]);

    // The report: totals per operation and binding, each kind once with its count and an example.
    const summary = await summarise(fs.createReadStream(log));
    expect(summary.lines).toBe(4);
    expect(summary.byOperation).toEqual({
      'GetTokenDevice soap11': 1,
      'GetTokenDevice httpget': 1,
      'GetTokenDevice httppost': 1,
      'GetStudentSchool soap11': 1,
    });
    expect(summary.kinds.map((k) => [k.kind, k.count])).toEqual([
      ['body text of /string', 2],
      ['body text of /soap:Envelope/soap:Body/GetStudentSchoolResponse/GetStudentSchoolResult/StudentInfo/fullName', 1],
      ['body text of /soap:Envelope/soap:Body/GetTokenDeviceResponse/GetTokenDeviceResult', 1],
    ]);
    // One example per kind: whichever request showed it first.
    expect(format(summary)).toMatch(/ 2 {2}body text of \/string\n +e\.g\. (GET|POST) \/PushNotificationMobile\.asmx\/GetTokenDevice/);
  });
});

describe('noise: a second legacy site (SHADOW_URL_SECONDARY)', () => {
  /** The first legacy site's data with the device token changed again: the two legacy sites disagree on it, and only on it. */
  function secondData(first: string): string {
    const dir = path.join(tmp, 'second-data');
    fs.mkdirSync(dir, { recursive: true });
    fs.copyFileSync(path.join(first, 'students.csv'), path.join(dir, 'students.csv'));
    fs.writeFileSync(
      path.join(dir, 'devices.csv'),
      fs.readFileSync(path.join(first, 'devices.csv'), 'utf8').replace('fcm:changed-1001', 'fcm:second-1001'),
    );
    return dir;
  }

  test('a difference the two legacy answers also show is noise; one they agree on is real', async () => {
    const first = otherData();
    const legacy = await start({}, first);
    const second = await start({}, secondData(first));
    const log = logFile();
    const ours = await start({ SHADOW_URL: `${legacy.base}/`, SHADOW_URL_SECONDARY: `${second.base}/`, SHADOW_LOG: log });
    const school = soap11(
      '/NotificationNotes.asmx',
      'GetStudentSchool',
      '<school_base_url>http://alnoor.school.example</school_base_url><show_active>49</show_active>',
    );
    const before = await outcomes(true);
    for (const c of [TOKEN_1001[1], school, UNCHANGED[0]]) await ask(ours.base, c, false);
    // The token differs between the legacy sites too (noise); the name is the same on both (real).
    expect(await settled(before, 3, true)).toEqual({
      'GetTokenDevice httpget noise': 1,
      'GetStudentSchool soap11 difference': 1,
      'GetTokenDevice httpget match': 1,
    });
    const lines = await logLines(log, 2);
    expect(lines.map((l) => [l.operation, l.noise]).sort()).toEqual([
      ['GetStudentSchool', false],
      ['GetTokenDevice', true],
    ]);
    const summary = await summarise(fs.createReadStream(log));
    expect([summary.lines, summary.noise]).toEqual([2, 1]);
    expect(format(summary)).toMatch(/^2 requests with differences, 1 of them noise \(the second legacy site differed the same way\)\n/);
  });
  test('legacy-first under a virtual directory: the second site is asked by its own path, and the rule is the same', async () => {
    const first = otherData();
    const legacy = await start({}, first);
    const second = await start({}, secondData(first));
    const log = logFile();
    const front = await start({
      SHADOW_URL: `${legacy.base}/`,
      SHADOW_URL_SECONDARY: `${second.base}/`,
      SHADOW_MODE: 'legacy-first',
      BASE_PATH: '/StudentService',
      SHADOW_LOG: log,
    });
    const school = soap11(
      '/StudentService/NotificationNotes.asmx',
      'GetStudentSchool',
      '<school_base_url>http://alnoor.school.example</school_base_url><show_active>49</show_active>',
    );
    const before = await outcomes(true);
    const token = await ask(front.base, get('/StudentService/PushNotificationMobile.asmx/GetTokenDevice?id=dev-1001'), false);
    expect(token.body).toContain('fcm:changed-1001');
    await ask(front.base, school, false);
    expect(await settled(before, 2, true)).toEqual({ 'GetTokenDevice httpget noise': 1, 'GetStudentSchool soap11 difference': 1 });
  });
});

describe('long answers', () => {
  /** The fixture data with one of the 500 students of big.school.example renamed. */
  function bigSchoolChanged(): string {
    const dir = path.join(tmp, 'big-changed');
    fs.mkdirSync(dir, { recursive: true });
    const read = (name: string) => fs.readFileSync(path.join(FIXTURES, 'data', name), 'utf8');
    fs.writeFileSync(path.join(dir, 'devices.csv'), read('devices.csv'));
    fs.writeFileSync(path.join(dir, 'students.csv'), read('students.csv').replace('"Student 250 ""quoted""', '"Studant 250 ""quoted""'));
    return dir;
  }
  const BIG = [
    soap11(
      '/NotificationNotes.asmx',
      'GetStudentSchool',
      '<school_base_url>http://big.school.example</school_base_url><show_active>49</show_active>',
    ),
    get('/NotificationNotes.asmx/GetStudentSchool?school_base_url=http%3A%2F%2Fbig.school.example&show_active=1'),
  ];

  test('a 500-student answer (sent as bytes) is compared in full: the same bytes match, one changed name is reported', async () => {
    const same = await start();
    const changed = await start({}, bigSchoolChanged());
    const log = logFile();
    const toSame = await start({ SHADOW_URL: `${same.base}/`, SHADOW_LOG: log });
    const toChanged = await start({ SHADOW_URL: `${changed.base}/`, SHADOW_LOG: log });
    let before = await outcomes();
    const answers = await Promise.all(BIG.map((c) => ask(toSame.base, c, false)));
    expect(answers.map((a) => [a.status, a.body.length > 16 * 1024, a.body.includes('Student 250 ')])).toEqual([
      [200, true, true],
      [200, true, true],
    ]);
    expect(await settled(before, 2)).toEqual({ match: 2 });

    before = await outcomes();
    await Promise.all(BIG.map((c) => ask(toChanged.base, c, false)));
    expect(await settled(before, 2)).toEqual({ difference: 2 });
    const lines = await logLines(log, 2);
    expect(lines.map((l) => l.differences.map((d) => d.kind)).sort()).toEqual([
      ['body text of /ArrayOfStudentInfo/StudentInfo/fullName'],
      ['body text of /soap:Envelope/soap:Body/GetStudentSchoolResponse/GetStudentSchoolResult/StudentInfo/fullName'],
    ]);
    for (const l of lines) {
      expect(l.legacy.body).toContain('Studant 250 ');
      expect(l.ours.body).toContain('Student 250 ');
      expect(l.differences[0].detail).toContain('Studant 250');
    }
  });
});

test('the copies run in a process of their own, at the lowest priority by default (on Linux: SCHED_IDLE where chrt is, else nice 19)', async () => {
  if (process.platform !== 'linux') return console.warn('skipped: priorities are read from /proc on Linux');
  const children = () => fs.readFileSync(`/proc/self/task/${process.pid}/children`, 'utf8').split(' ').filter(Boolean);
  const known = new Set(children());
  const legacy = await start();
  // The default (the other tests run theirs at normal priority: test/helpers/settings.ts).
  const ours = await start({ SHADOW_URL: `${legacy.base}/`, SHADOW_LOG: '', SHADOW_COPIER_PRIORITY: 'lowest' });
  expect((await ask(ours.base, TOKEN_1001[1], false)).status).toBe(200);
  // The copier starts with the first copy. Not waited for to settle: at this priority it runs only on
  // processor time nobody else wants, which the suites side by side may not leave for long.
  let copiers: string[] = [];
  while (copiers.length === 0) {
    copiers = children().filter((pid) => !known.has(pid));
    await new Promise((r) => setTimeout(r, 10));
  }
  expect(copiers.length).toBe(1);
  // Fields of /proc/<pid>/task/<tid>/stat after the command's name: nice is the 19th, policy the 41st (5: SCHED_IDLE).
  const chrt = spawnSync('chrt', ['--version']).status === 0;
  const stats = () =>
    fs.readdirSync(`/proc/${copiers[0]}/task`).map((tid) =>
      fs
        .readFileSync(`/proc/${copiers[0]}/task/${tid}/stat`, 'utf8')
        .replace(/^.*\) /s, '')
        .split(' '),
    );
  // Once node runs (chrt has set the policy and exec'd it): its threads, the garbage collector's among them.
  let threads = stats();
  while (threads.length === 1) {
    await new Promise((r) => setTimeout(r, 10));
    threads = stats();
  }
  for (const f of threads) expect(chrt ? f[38] : f[16]).toBe(chrt ? '5' : '19');
  // This process keeps its priority.
  expect(
    fs
      .readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8')
      .replace(/^.*\) /s, '')
      .split(' ')[38],
  ).toBe('0');
});

/** A stand-in legacy host that records what it is asked and answers each request with a fault. */
async function recordingHost(): Promise<{ base: string; asked: string[] }> {
  const asked: string[] = [];
  const { base, server } = await listen((req, res) => {
    req.resume();
    req.on('end', () => {
      asked.push(`${req.method} ${req.url}`);
      res.writeHead(500, { 'Content-Type': 'text/plain' }).end('no');
    });
  });
  running.push({ base, t: undefined as unknown as TestApp, close: () => new Promise((r) => server.close(() => r())) });
  return { base, asked };
}

describe('operations with effects', () => {
  test('AuthCode is never copied by default; its service pages are', async () => {
    const host = await recordingHost();
    const ours = await start({ SHADOW_URL: host.base, SHADOW_LOG: '' });
    const before = await outcomes();
    for (const c of AUTH_CODE) expect((await ask(ours.base, c, false)).status).toBe(200);
    await ask(ours.base, get('/AuthCodeSending.asmx?wsdl'), false);
    await ask(ours.base, get('/PushNotificationMobile.asmx/GetTokenDevice?id=dev-1002'), false);
    await settled(before, 2);
    expect(host.asked.sort()).toEqual(['GET /AuthCodeSending.asmx?wsdl', 'GET /PushNotificationMobile.asmx/GetTokenDevice?id=dev-1002']);
  });

  test('what is copied is read from the URL as routing reads it: %-escapes decoded; a path IIS would fold elsewhere is not copied', async () => {
    const host = await recordingHost();
    const ours = await start({ SHADOW_URL: host.base, SHADOW_LOG: '', BASE_PATH: '/StudentService' });
    const before = await outcomes();
    // Served as AboutUs's GetAboutUs and AuthCodeSending's help page, and copied (the raw path's reading copied none of them) ...
    const escaped = [
      '/StudentService/About%55s.asmx/GetAboutUs',
      '/studentservice/AuthCodeSending%2Easmx',
      '/StudentService/AboutUs.asmx%2FGetAboutUs',
    ];
    for (const p of escaped) expect((await ask(ours.base, get(p), false)).status).toBe(200);
    // ... AuthCode, however its URL is escaped, is not; nor are paths with dot segments or backslashes, which IIS folds
    // before routing (these two would be AuthCode there) where this service routes them to AboutUs; nor a URL whose
    // BASE_PATH is escaped, which the copier could not move to the legacy site's directory.
    const AUTH = '?code=4821&phone=%2B9647701234567';
    const notCopied = [
      `/StudentService/AuthCode%53ending.asmx/AuthCode${AUTH}`,
      `/StudentService/AboutUs.asmx/../AuthCodeSending.asmx/AuthCode${AUTH}`,
      `/StudentService/AboutUs.asmx/%2E%2E%5CAuthCodeSending.asmx%5CAuthCode${AUTH}`,
      '/Student%53ervice/AboutUs.asmx/GetAboutUs',
    ];
    for (const p of notCopied) await ask(ours.base, get(p), false);
    expect((await ask(ours.base, get(notCopied[3]), false)).status).toBe(200);
    await ask(ours.base, get('/StudentService/AboutUs.asmx/GetAboutUs'), false);
    await settled(before, 4);
    expect(host.asked.sort()).toEqual([
      'GET /About%55s.asmx/GetAboutUs',
      'GET /AboutUs.asmx%2FGetAboutUs',
      'GET /AboutUs.asmx/GetAboutUs',
      'GET /AuthCodeSending%2Easmx',
    ]);
  });

  test("SHADOW_INCLUDE=AuthCode copies it, and the log holds no code and the phone masked as the service's log masks it", async () => {
    const host = await recordingHost();
    const log = logFile();
    const ours = await start({ SHADOW_URL: host.base, SHADOW_LOG: log, SHADOW_INCLUDE: 'AuthCode' });
    const before = await outcomes();
    // Request ids of our own: the log keeps each line's id, and three random UUIDs (the service's own) hold "4821" about once in 700 runs.
    for (const [i, c] of AUTH_CODE.entries())
      await ask(ours.base, { ...c, headers: { ...c.headers, 'X-Request-Id': `authcode-copy-${i}` } }, false);
    expect(await settled(before, 3)).toEqual({ difference: 3 });
    expect(host.asked.sort()).toEqual([
      'GET /AuthCodeSending.asmx/AuthCode?code=4821&phone=%2B9647701234567',
      'POST /AuthCodeSending.asmx',
      'POST /AuthCodeSending.asmx/AuthCode',
    ]);
    const lines = await logLines(log, 3);
    expect(lines.map((l) => l.requestId).sort()).toEqual(['authcode-copy-0', 'authcode-copy-1', 'authcode-copy-2']);
    const text = fs.readFileSync(log, 'utf8');
    expect(text).not.toContain('4821');
    expect(text).not.toMatch(/770123/);
    expect(lines.map((l) => l.request.url + l.request.body).join('\n')).toMatch(
      /<phone>\+96477\*{4}567<\/phone>[\s\S]*phone=%2B96477\*{4}567/,
    );
  });

  test('a code named by its escaped name (%63ode, c%6fde, CODE) and a phone in any spelling: neither the differences log nor the console holds them', async () => {
    const host = await recordingHost();
    const log = logFile();
    const ours = await start({ SHADOW_URL: host.base, SHADOW_LOG: log, SHADOW_INCLUDE: 'AuthCode' });
    const before = await outcomes();
    const asked = [
      post('/AuthCodeSending.asmx/AuthCode', '%63ode=4821&phone=0770%20123%204567'),
      post('/AuthCodeSending.asmx/AuthCode', 'c%6fde=4821&PHONE=%2B964-770-123-4567'),
      get('/AuthCodeSending.asmx/AuthCode?CODE=4821&%70hone=07701234567'),
      soap11('/AuthCodeSending.asmx', 'AuthCode', '<code>4821</code><phone>(0770) 123 4567</phone>'),
    ];
    for (const [i, c] of asked.entries()) await ask(ours.base, { ...c, headers: { ...c.headers, 'X-Request-Id': `escaped-${i}` } }, false);
    expect(await settled(before, asked.length)).toEqual({ difference: asked.length });
    await logLines(log, asked.length);
    const digits = /4821|1\D{0,3}2\D{0,3}3\D{0,3}4\D{0,3}5\D{0,3}6\D{0,3}7/;
    expect(fs.readFileSync(log, 'utf8')).not.toMatch(digits);
    // The console reads the log again (and masks again what an older version or a hand wrote there).
    const unmasked = JSON.parse(fs.readFileSync(log, 'utf8').split('\n')[0]!) as DifferenceLine;
    unmasked.request.body = '%63ode=4821&phone=0770%20123%204567';
    unmasked.request.url = '/AuthCodeSending.asmx/AuthCode?c%6fde=4821&x=0770-123-4567';
    unmasked.legacy.body = '<code>4821</code> 0770 123 4567';
    fs.appendFileSync(log, `${JSON.stringify(unmasked)}\n`);
    const shown = latestDifferences(log, 10);
    expect(shown).toHaveLength(asked.length + 1);
    expect(JSON.stringify(shown)).not.toMatch(digits);
    expect(shown[0]!.request.body).toBe('%63ode=[removed]&phone=077****567');
  });
});

test('SHADOW_SAMPLE=0 copies nothing, SHADOW_SAMPLE=1 everything', async () => {
  const host = await recordingHost();
  const none = await start({ SHADOW_URL: host.base, SHADOW_SAMPLE: '0', SHADOW_LOG: '' });
  const all = await start({ SHADOW_URL: host.base, SHADOW_SAMPLE: '1.0', SHADOW_LOG: '' });
  const before = await outcomes();
  for (const c of TOKEN_1001) {
    await ask(none.base, c, false);
    await ask(all.base, c, false);
  }
  // The three copies of the second instance are all there is: the first made none.
  expect(await settled(before, 3)).toEqual({ difference: 3 });
  expect(host.asked.length).toBe(3);
});

test("mask: codes out, phones masked as the service's log masks them, in XML, forms, queries and anywhere else", () => {
  expect(mask('<a:code x="1">12<!-- c -->34</a:code><code/><Phone>+964 770 123 4567</Phone>')).toBe(
    '<a:code x="1">[removed]</a:code><code/><Phone>+96477****567</Phone>',
  );
  expect(mask('/AuthCode?CODE=4821&phone=07701234567&x=1')).toBe('/AuthCode?CODE=[removed]&phone=077****567&x=1');
  expect(mask('Cannot convert 07701234567 to System.Char; id 1001')).toBe('Cannot convert 077****567 to System.Char; id 1001');
  expect(mask('<code>never closed 1234')).toBe('<code>[removed]');
});

describe('a legacy host that hangs or refuses', () => {
  test('hanging: clients are answered while every copy waits, the queue holds two, the rest are dropped and counted', async () => {
    const waiting: http.ServerResponse[] = [];
    let reached!: () => void;
    const firstCopy = new Promise<void>((r) => (reached = r));
    const { base, server } = await listen((_req, res) => {
      waiting.push(res);
      reached();
    });
    running.push({
      base,
      t: undefined as unknown as TestApp,
      close: () =>
        new Promise((r) => {
          server.closeAllConnections();
          server.close(() => r());
        }),
    });
    const ours = await start({ SHADOW_URL: base, SHADOW_CONCURRENCY: '1', SHADOW_QUEUE: '2', SHADOW_TIMEOUT_MS: '600000', SHADOW_LOG: '' });
    const before = await outcomes();
    for (let i = 0; i < 10; i++) {
      const a = await ask(ours.base, TOKEN_1001[i % 3], false);
      expect([a.status, a.body.includes('fcm:APA91bH-token-1001')]).toEqual([200, true]);
    }
    // Every client has its answer; one copy in flight and two waiting, the other seven dropped.
    expect(await settled(before, 7)).toEqual({ dropped: 7 });
    // And the legacy host holds the first copy, unanswered, only one at a time.
    // (Its copier is a process of its own: on a loaded machine the first copy came after 5 s once.)
    await firstCopy;
    expect(waiting.length).toBe(1);
    expect(waiting[0].writableEnded).toBe(false);
  });

  test('a copy not answered within SHADOW_TIMEOUT_MS is a legacy error', async () => {
    const { base, server } = await listen(() => undefined);
    running.push({
      base,
      t: undefined as unknown as TestApp,
      close: () =>
        new Promise((r) => {
          server.closeAllConnections();
          server.close(() => r());
        }),
    });
    const ours = await start({ SHADOW_URL: base, SHADOW_TIMEOUT_MS: '50', SHADOW_LOG: '' });
    const before = await outcomes();
    expect((await ask(ours.base, TOKEN_1001[1], false)).status).toBe(200);
    expect(await settled(before, 1)).toEqual({ legacy_error: 1 });
  });

  test('refusing connections: clients get their answers, each copy is a legacy error', async () => {
    const ours = await start({ SHADOW_URL: REFUSING, SHADOW_LOG: '' });
    const before = await outcomes();
    for (const c of TOKEN_1001) expect((await ask(ours.base, c, false)).body).toContain('fcm:APA91bH-token-1001');
    expect(await settled(before, 3)).toEqual({ legacy_error: 3 });
  });
});

describe('legacy-first', () => {
  test('clients get exactly the legacy answer; the copy to this service is compared', async () => {
    const legacy = await start({}, otherData());
    const log = logFile();
    const front = await start({ SHADOW_URL: legacy.base, SHADOW_MODE: 'legacy-first', SHADOW_LOG: log });
    const before = await outcomes(true);
    const cases = [
      ...TOKEN_1001,
      ...UNCHANGED,
      get('/AboutUs.asmx'),
      get('/NoSuchService.asmx'),
      { ...get('/AboutUs.asmx'), method: 'PUT' },
    ];
    for (const c of cases) {
      const [viaFront, direct] = await Promise.all([ask(front.base, c, false), ask(legacy.base, c, false)]);
      // The WSDL names the host it was asked by; the front keeps the client's Host, so it is the front's.
      expect(viaFront).toEqual({ ...direct, body: direct.body.split(legacy.base).join(front.base) });
    }
    // /NoSuchService.asmx is no service of ours: not copied. PUT names no binding.
    expect(await settled(before, 8, true)).toEqual({
      'GetTokenDevice soap11 difference': 1,
      'GetTokenDevice httpget difference': 1,
      'GetTokenDevice httppost difference': 1,
      'GetTokenDevice httpget match': 1,
      ' documentation match': 2,
      'GetAboutUs httpget match': 1,
      '  match': 1,
    });
    const line = (await logLines(log, 3)).find((l) => l.binding === 'httpget')!;
    expect(line).toMatchObject({
      mode: 'legacy-first',
      legacy: { body: expect.stringContaining('fcm:changed-1001') },
      ours: { body: expect.stringContaining('fcm:APA91bH-token-1001') },
    });
  });

  test('a legacy host that refuses: the client gets the 502 of a reverse proxy, counted as a legacy error', async () => {
    const front = await start({ SHADOW_URL: REFUSING, SHADOW_MODE: 'legacy-first', SHADOW_LOG: '' });
    const before = await outcomes();
    const a = await ask(front.base, TOKEN_1001[1], false);
    expect([a.status, a.headers['content-type']]).toEqual([502, 'text/html']);
    expect(a.body).toContain('502 - Web server received an invalid response');
    expect(delta(await outcomes(), before)).toEqual({ legacy_error: 1 });
  });
});

test('the shadow counters are on the service metrics', async () => {
  expect(await client.register.metrics()).toMatch(
    /^asmx_shadow_exchanges_total\{operation="GetTokenDevice",binding="httpget",outcome="match"\} \d+$/m,
  );
});
