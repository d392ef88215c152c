import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { MAIN, request, type Service, servicesPerTest, steadyLoad, TOKEN_PATH } from './helpers/service';

/** Graceful shutdown and the worker processes, on the service as built. */

const service = servicesPerTest();

/** A request whose body is still being sent: in flight until `finish` is called. */
async function requestInFlight(port: number): Promise<{ finish(): void; answer: Promise<string> }> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise((r) => socket.once('connect', r));
  const body = 'code=1&phone=2';
  socket.write(
    `POST /AuthCodeSending.asmx/AuthCode HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 3)}`,
  );
  let received = '';
  socket.setEncoding('utf8');
  socket.on('error', () => undefined); // a reset shows as an incomplete answer
  socket.on('data', (d: string) => (received += d));
  const answer = new Promise<string>((resolve) => socket.once('close', () => resolve(received)));
  return { finish: () => socket.write(body.slice(3)), answer };
}

describe.each([
  ['one process', {}, 1],
  ['WORKERS=2', { WORKERS: '2' }, 2],
])('%s', (_name, env, processes) => {
  /** Every serving process has begun to stop (a cluster primary tells its workers). */
  const allStopping = (s: Service) =>
    s.waitFor((l) => l.msg === 'stopping' && s.lines.filter((x) => x.msg === 'stopping').length === processes);

  test('SIGTERM under a steady load: not one request fails, exit code 0', async () => {
    const s = await service({ env });
    const load = await steadyLoad(s.port, 8, 100, () => s.proc.kill('SIGTERM'));
    expect(load.failures).toEqual([]);
    expect(load.ok).toBeGreaterThan(50);
    expect(load.okAfterSignal).toBeGreaterThan(0);
    expect(await s.exited).toEqual({ code: 0, signal: null });
    expect(s.lines.filter((l) => l.msg === 'stopped').every((l) => l.exitCode === 0)).toBe(true);
  }, 30000);

  test('a request in flight finishes, readiness turns false meanwhile, then exit 0', async () => {
    const s = await service({ env });
    const inFlight = await requestInFlight(s.port);
    s.proc.kill('SIGTERM');
    await allStopping(s);
    const ready = await request(s.adminPort, '/readyz');
    expect([ready.status, ready.body]).toEqual([503, 'not ready: shutting down\n']);
    inFlight.finish();
    const answer = await inFlight.answer;
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(answer).toMatch(/\r\nConnection: close\r\n/i);
    expect(await s.exited).toEqual({ code: 0, signal: null });
  });

  test('a connection that sent part of a request and went quiet does not hold the stop: closed once idle, exit 0', async () => {
    const s = await service({ env: { ...env, SHUTDOWN_TIMEOUT_MS: '5000' } });
    const socket = net.connect(s.port, '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise((r) => socket.once('connect', r));
    socket.write('GET /AboutUs.asmx HTTP/1.1\r\nHo');
    const closed = new Promise((r) => socket.once('close', r));
    // Let the service read those bytes before the stop.
    await new Promise((r) => setTimeout(r, 200));
    s.proc.kill('SIGTERM');
    await closed;
    expect(await s.exited).toEqual({ code: 0, signal: null });
  });

  test('a second signal exits at once', async () => {
    const s = await service({ env });
    await requestInFlight(s.port);
    s.proc.kill('SIGTERM');
    await allStopping(s);
    s.proc.kill('SIGINT');
    expect((await s.exited).code).toBe(1);
    expect(s.lines.some((l) => l.msg === 'second signal: exiting now')).toBe(true);
  });
});

test('SHUTDOWN_TIMEOUT_MS bounds the wait for requests in flight (exit 1)', async () => {
  const s = await service({ env: { SHUTDOWN_TIMEOUT_MS: '300' } });
  const inFlight = await requestInFlight(s.port);
  s.proc.kill('SIGTERM');
  // The request never finishes (its client never sends the rest): only the bound ends the wait, and says so.
  expect((await s.exited).code).toBe(1);
  const stopped = s.lines.find((l) => l.level === 'error')!;
  expect(stopped.msg).toBe('stopped before every request finished');
  expect((stopped.error as { message: string }).message).toBe('requests still in flight after 300 ms');
  expect(await inFlight.answer).toBe('');
});

describe('WORKERS=2', () => {
  test('serves from both processes on one port; one scrape sums them', async () => {
    const s = await service({ env: { WORKERS: '2' } });
    const n = 20;
    for (let i = 0; i < n; i += 1) expect((await request(s.port, TOKEN_PATH)).status).toBe(200);
    const pids = new Set(s.lines.filter((l) => l.msg === 'request').map((l) => l.pid));
    expect(pids.size).toBe(2);
    const metrics = (await request(s.adminPort, '/metrics')).body;
    expect(metrics).toMatch(
      new RegExp(
        `^asmx_requests_total\\{endpoint="PushNotificationMobile",operation="GetTokenDevice",binding="httpget",status="200"\\} ${n}$`,
        'm',
      ),
    );
    expect((await request(s.adminPort, '/readyz')).status).toBe(200);
    // Readiness is the primary's one answer for both workers, not summed.
    expect(metrics.match(/^asmx_ready .*$/gm)).toEqual(['asmx_ready 1']);
  });

  test('a worker that dies is replaced and logged; the requests that follow do not fail', async () => {
    const s = await service({ env: { WORKERS: '2' } });
    await request(s.port, TOKEN_PATH);
    const victim = (await s.waitFor((l) => l.msg === 'request')).pid;
    process.kill(victim, 'SIGKILL');
    const died = await s.waitFor((l) => l.msg === 'worker died; starting another');
    expect(died).toMatchObject({ level: 'warn', workerPid: victim, signal: 'SIGKILL' });
    const results = await Promise.all(
      Array.from({ length: 40 }, () =>
        request(s.port, TOKEN_PATH).then(
          (r) => r.status,
          (e: Error) => e.message,
        ),
      ),
    );
    expect(results.filter((r) => r !== 200)).toEqual([]);
    // The replacement serves too, once it is up (connections go to the workers in turn).
    const before = new Set(s.lines.slice(0, s.lines.indexOf(died)).map((e) => e.pid));
    const servedByReplacement = () => s.lines.some((l) => l.msg === 'request' && !before.has(l.pid));
    for (let i = 0; i < 100 && !servedByReplacement(); i++) {
      expect(await request(s.port, TOKEN_PATH).then((r) => r.status)).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(servedByReplacement()).toBe(true);
  });
});

(process.platform === 'linux' ? test : test.skip)(
  'under `npm start`, SIGTERM to npm stops the service gracefully: no process is left serving',
  async () => {
    // A package whose start script runs the build, as the project's own `npm start` does.
    const pkg = fs.mkdtempSync(path.join(os.tmpdir(), 'student-info-npm-'));
    fs.writeFileSync(
      path.join(pkg, 'package.json'),
      JSON.stringify({ name: 'npm-start', version: '1.0.0', scripts: { start: `node ${MAIN}` } }),
    );
    try {
      const s = await service({ command: ['npm', 'start', '--silent', '--prefix', pkg] });
      const pid = (await s.waitFor((l) => l.msg.startsWith('listening on '))).pid;
      expect(pid).not.toBe(s.proc.pid);
      s.proc.kill('SIGTERM');
      await s.exited;
      expect(await s.waitFor((l) => l.msg === 'stopped' && l.pid === pid)).toMatchObject({ exitCode: 0 });
      // Gone (or a zombie waiting for an init process to reap it: no longer running).
      const running = () => {
        try {
          return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
        } catch {
          return false;
        }
      };
      for (let i = 0; i < 60 && running(); i += 1) await new Promise((r) => setTimeout(r, 50));
      expect(running()).toBe(false);
    } finally {
      fs.rmSync(pkg, { recursive: true, force: true });
    }
  },
);
