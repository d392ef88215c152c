import Database from 'better-sqlite3';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { maskPhone } from '../src/basics/log';
import { loadConfig } from '../src/config';
import { startLine } from '../src/process/start-line';
import { freePort, request, type Service, servicesPerTest, TOKEN_PATH } from './helpers/service';

/** The service as an operator runs it (the build, a process, its stderr and its admin listener). */

const service = servicesPerTest();

/** What /readyz adds while no SMS gateway is configured (the default). */
const NO_GATEWAY = 'SMS: codes are queued, not sent: no gateway is configured (SMS_GATEWAY=none)';

const metricsOf = async (s: Service) => (await request(s.adminPort, '/metrics')).body;

describe('start', () => {
  test('the start line gives the address to open, the store and its row counts', async () => {
    const s = await service();
    const line = s.lines.find((l) => l.msg.startsWith('listening on '))!;
    expect(line.msg).toContain(`open http://127.0.0.1:${s.port}/AuthCodeSending.asmx`);
    expect(line.msg).toMatch(
      new RegExp(
        `store SQLite ${s.dbPath.replace(/[.]/g, '\\.')}: \\d+ students, \\d+ devices; settings read: PORT, HOST, SQLITE_PATH, LOG_LEVEL, ADMIN_PORT$`,
      ),
    );
    // No gateway by default: the line says that codes are not sent.
    expect(line.sms).toBe('SMS: codes are queued, not sent (no gateway: set SMS_GATEWAY); to any country; codes expire after 10 min');
    expect(line.msg).not.toContain('empty');
  });

  test('on PostgreSQL the start line names the database, never its password', () => {
    const line = startLine(
      loadConfig({ DATABASE_URL: 'postgres://school:s3cret@db.example:5432/students' }),
      8080,
      { students: 3, devices: 1 },
      1,
    );
    expect(line).toContain('store PostgreSQL postgres://school:***@db.example:5432/students: 3 students, 1 devices');
    expect(line).not.toContain('s3cret');
    expect(line).not.toContain('SQLite');
  });

  test('an empty store gets a hint, whole however long the store path', async () => {
    // A relative path, in the test's own directory (the working directory): created by the service.
    const s = await service({ fresh: true, env: { SQLITE_PATH: `${'a-long-folder-name/'.repeat(8)}student-info.db` } });
    expect(s.lines.find((l) => l.msg.startsWith('listening on '))!.msg).toMatch(
      /: 0 students, 0 devices; the store is empty: load it with `npm run import -- --students FILE\.csv --devices FILE\.csv` \(or --demo\); settings read: /,
    );
  });

  test('"listening" is logged only once listening succeeded', async () => {
    const blocker = net.createServer().listen(0, '127.0.0.1');
    await new Promise((r) => blocker.once('listening', r));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const s = await service({ env: { PORT: String(port) }, waitListening: false });
      expect((await s.exited).code).toBe(1);
      expect(s.text).toEqual([expect.stringMatching(new RegExp(`^error: port ${port} is in use on 127\\.0\\.0\\.1 \\(PORT\\): `))]);
      expect(s.lines.filter((l) => l.msg.startsWith('listening'))).toEqual([]);
    } finally {
      blocker.close();
    }
  });

  test('settings are read from a .env file in the working directory; the environment wins', async () => {
    const cwd = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'student-info-env-'));
    const port = await freePort();
    fs.writeFileSync(path.join(cwd, '.env'), `PORT=${port}\nXML_NAMESPACE=urn:from-dotenv\nBASE_PATH=/FromDotenv\n`);
    try {
      const s = await service({ cwd, env: { PORT: undefined, BASE_PATH: '/FromEnv' } });
      expect(s.port).toBe(port);
      expect((await request(port, '/FromEnv/AboutUs.asmx?wsdl')).body).toContain('targetNamespace="urn:from-dotenv"');
    } finally {
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  });

  test('LOG_LEVEL is validated like every other setting', async () => {
    const s = await service({ env: { LOG_LEVEL: 'verbose' }, waitListening: false });
    expect((await s.exited).code).toBe(1);
    expect(s.text).toEqual(['error: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "verbose"']);
  });
});

describe('request log', () => {
  test('one JSON line per request, with the request id kept or made and returned', async () => {
    const s = await service();
    const kept = await request(s.port, TOKEN_PATH, { headers: { 'X-Request-Id': 'upstream-42' } });
    expect(kept.headers['x-request-id']).toBe('upstream-42');
    const made = await request(s.port, '/PushNotificationMobile.asmx', {
      method: 'POST',
      headers: { 'Content-Type': 'application/soap+xml; charset=utf-8', 'X-Request-Id': 'bad id with spaces' },
      body: '<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope"><soap:Body><GetTokenDevice xmlns="http://tempuri.org/"><id>x</id></GetTokenDevice></soap:Body></soap:Envelope>',
    });
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);

    const first = await s.waitFor((l) => l.reqId === 'upstream-42');
    expect(first).toMatchObject({
      msg: 'request',
      level: 'info',
      endpoint: 'PushNotificationMobile',
      operation: 'GetTokenDevice',
      binding: 'httpget',
      status: 200,
      client: '127.0.0.1',
      bytesOut: expect.any(Number),
      ms: expect.any(Number),
    });
    expect(first.bytesOut).toBeGreaterThan(Number(kept.headers['content-length']));
    const second = await s.waitFor((l) => l.reqId === made.headers['x-request-id']);
    expect(second).toMatchObject({ operation: 'GetTokenDevice', binding: 'soap12', status: 200, bytesIn: expect.any(Number) });
  });

  test('faults carry their code', async () => {
    const s = await service();
    const r = await request(s.port, '/NotificationNotes.asmx/GetStudentSchool?school_base_url=x&show_active=12');
    expect(r.status).toBe(500);
    expect(await s.waitFor((l) => l.reqId === r.headers['x-request-id'])).toMatchObject({
      binding: 'httpget',
      status: 500,
      fault: 'Client',
    });
  });

  test('no line holds an AuthCode code or a whole phone number', async () => {
    const s = await service();
    const r = await request(s.port, '/AuthCodeSending.asmx/AuthCode', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'code=480213&phone=%2B9647701234567',
    });
    expect(r.status).toBe(200);
    await s.waitFor((l) => l.reqId === r.headers['x-request-id']);
    // The default gateway (none) queues the code and writes it nowhere.
    const all = s.lines.map((l) => JSON.stringify(l)).join('\n');
    expect(all).not.toContain('480213');
    expect(all).not.toContain('7701234567');
  });

  test('phone numbers are masked but for their country and operator prefix and last three digits, once', () => {
    expect(maskPhone('+964 770 123 4567')).toBe('+96477****567');
    expect(maskPhone(maskPhone('+9647701234567'))).toBe('+96477****567');
  });

  test('an unexpected failure is logged with its stack under the request id, and answered generically', async () => {
    const s = await service();
    // The outbox table gone from under the running service: its INSERT fails inside the operation.
    const db = new Database(s.dbPath);
    db.exec('DROP TABLE auth_code_outbox');
    db.close();
    const r = await request(s.port, '/AuthCodeSending.asmx/AuthCode?code=1&phone=%2B9647701234567');
    expect([r.status, r.body]).toEqual([
      500,
      'Server was unable to process request. ---> An internal error occurred while processing the request.\r\n',
    ]);
    const id = r.headers['x-request-id'];
    const error = await s.waitFor((l) => l.reqId === id && l.level === 'error');
    expect(error.msg).toBe('request failed');
    expect((error.error as { stack: string }).stack).toMatch(/no such table: auth_code_outbox[\s\S]*\n\s+at /);
    expect(await s.waitFor((l) => l.reqId === id && l.msg === 'request')).toMatchObject({
      status: 500,
      fault: 'Server',
      operation: 'AuthCode',
    });
    expect(await metricsOf(s)).toMatch(/^asmx_store_errors_total\{endpoint="AuthCodeSending",operation="AuthCode"\} 1$/m);
  });
});

describe('admin listener', () => {
  test('/metrics shows the request just made, by operation and binding', async () => {
    const s = await service();
    await request(s.port, TOKEN_PATH);
    await request(s.port, TOKEN_PATH);
    const m = await metricsOf(s);
    expect(m).toMatch(
      /^asmx_requests_total\{endpoint="PushNotificationMobile",operation="GetTokenDevice",binding="httpget",status="200"\} 2$/m,
    );
    expect(m).toMatch(
      /^asmx_request_duration_seconds_count\{endpoint="PushNotificationMobile",operation="GetTokenDevice",binding="httpget"\} 2$/m,
    );
    expect(m).toMatch(/^process_resident_memory_bytes \d+/m);
  });

  test("/healthz answers; /readyz and /metrics' asmx_ready follow the store", async () => {
    const s = await service();
    const readyGauge = async () => /^asmx_ready (\S+)$/m.exec(await metricsOf(s))?.[1];
    expect(await request(s.adminPort, '/healthz')).toMatchObject({ status: 200, body: 'ok\n' });
    expect(await request(s.adminPort, '/readyz')).toMatchObject({ status: 200, body: `ready\n${NO_GATEWAY}\n` });
    expect(await readyGauge()).toBe('1');
    // The database file moved away: the service would not find it again.
    fs.renameSync(s.dbPath, `${s.dbPath}.moved`);
    const down = await request(s.adminPort, '/readyz');
    expect(down.status).toBe(503);
    expect(down.body).toMatch(/^not ready: store: .*no longer the file opened at start/);
    expect(await readyGauge()).toBe('0');
    fs.renameSync(`${s.dbPath}.moved`, s.dbPath);
    expect(await request(s.adminPort, '/readyz')).toMatchObject({ status: 200, body: `ready\n${NO_GATEWAY}\n` });
    expect(await readyGauge()).toBe('1');
    expect((await request(s.adminPort, '/nothing')).status).toBe(404);
  });

  test('is bound to 127.0.0.1 by default and ADMIN_PORT=0 turns it off', async () => {
    const s = await service({ env: { ADMIN_PORT: '0' } });
    expect(s.lines.some((l) => l.msg === 'admin listener')).toBe(false);
    const t = await service();
    expect(t.lines.find((l) => l.msg === 'admin listener')!.url).toBe(`http://127.0.0.1:${t.adminPort}/`);
  });
});
