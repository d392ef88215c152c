import fs from 'fs';
import net from 'net';
import os from 'os';
import path from 'path';
import { MAIN, type Service, servicesPerTest, TOKEN_PATH } from './helpers/service';
import { readinessWatch, stopLoad } from './helpers/stop-load';

/**
 * A stop drops nothing (issue 30, rule 3). Not ready first, then close, as Kubernetes drains: after
 * the signal the port stays open and serving for DRAIN_DELAY_MS while readiness says no, then closes;
 * only then do answers close their connections. SIGHUP (a closed terminal, some supervisors) is a
 * graceful stop like SIGTERM in every way of starting, never node's default exit 129.
 */

const service = servicesPerTest();
const linux = process.platform === 'linux' ? describe : describe.skip;

/**
 * Generous against a loaded machine: the test's balancer sees "not ready" within one poll (20 ms),
 * and has until the port closes to stop sending. The delay is what the setting exists for.
 */
const DRAIN_DELAY_MS = '5000';
/** Stops per way of starting: a stop that resets a connection 1 time in 3 cannot pass 4 in a row by chance. */
const STOPS = 4;

describe.each([
  ['one process', {}],
  ['WORKERS=2', { WORKERS: '2' }],
])('%s', (_name, env) => {
  test(`SIGTERM under a steady load of new and keep-alive connections behind a balancer that watches readiness: not one reset, ${STOPS} stops in a row, exit 0`, async () => {
    for (let stop = 0; stop < STOPS; stop += 1) {
      const s = await service({ env: { ...env, DRAIN_DELAY_MS } });
      const ready = readinessWatch(s.adminPort);
      const load = await stopLoad({ port: s.port, fresh: 16, keepAlive: 8, signalAfterOk: 200, signal: () => s.proc.kill('SIGTERM'), done: () => ready.notReady() });
      ready.stop();
      expect({ stop, failures: load.failures }).toEqual({ stop, failures: [] });
      expect(load.okAfterSignal).toBeGreaterThan(0);
      expect(await s.exited).toEqual({ code: 0, signal: null });
      // The port closed only after the drain delay: the load ended while it was still open.
      expect(load.refused).toBe(0);
      expect(s.lines.filter((l) => l.msg === 'stopped').every((l) => l.exitCode === 0)).toBe(true);
    }
  }, 120_000);
});

/**
 * Keep-alive connections with a second request in flight: its headers and part of its SOAP body
 * sent, the rest sent once the stop has begun.
 */
async function keepAliveInFlight(port: number, count: number) {
  const SOAP = '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><GetTokenDevice xmlns="http://tempuri.org/"><id>dev-1001</id></GetTokenDevice></soap:Body></soap:Envelope>';
  const head = `POST /PushNotificationMobile.asmx HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml; charset=utf-8\r\nSOAPAction: "http://tempuri.org/GetTokenDevice"\r\nContent-Length: ${SOAP.length}\r\n\r\n`;
  return Promise.all(
    Array.from({ length: count }, async () => {
      const socket = net.connect(port, '127.0.0.1');
      socket.on('error', () => undefined); // a reset shows as a missing answer
      let received = '';
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => (received += d));
      const closed = new Promise<void>((r) => socket.once('close', () => r()));
      socket.write(`GET ${TOKEN_PATH} HTTP/1.1\r\nHost: x\r\n\r\n`);
      while (!/\r\n\r\n[\s\S]*<\/string>/.test(received)) await new Promise((r) => setTimeout(r, 10));
      received = '';
      socket.write(head + SOAP.slice(0, 100));
      return {
        finish: () => socket.write(SOAP.slice(100)),
        answer: async () => {
          for (let i = 0; i < 1500 && !received.includes('</soap:Envelope>'); i += 1) await new Promise((r) => setTimeout(r, 10));
          socket.end();
          await closed;
          return received;
        },
      };
    }),
  );
}

const alive = (pid: number): boolean => {
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

linux.each([
  ['node', false, {}, 1],
  ['node, WORKERS=2', false, { WORKERS: '2' }, 2],
  ['npm start', true, {}, 1],
  ['npm start, WORKERS=2', true, { WORKERS: '2' }, 2],
])('SIGHUP, %s', (_name, underNpm, env, processes) => {
  test('a hang-up sent to the whole process group (a closed terminal) stops gracefully: every keep-alive request in flight is answered, then exit 0', async () => {
    const pkg = underNpm ? fs.mkdtempSync(path.join(os.tmpdir(), 'student-info-npm-')) : null;
    if (pkg !== null) fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'npm-start', version: '1.0.0', scripts: { start: `node ${MAIN}` } }));
    try {
      const s: Service = await service({ env, detached: true, command: pkg === null ? undefined : ['npm', 'start', '--silent', '--prefix', pkg] });
      const pid = (await s.waitFor((l) => l.msg.startsWith('listening on '))).pid;
      const inFlight = await keepAliveInFlight(s.port, 10);
      // The terminal's hang-up reaches every process of its foreground group, npm and the workers too.
      process.kill(-s.proc.pid!, 'SIGHUP');
      await s.waitFor((l) => l.msg === 'stopping' && s.lines.filter((x) => x.msg === 'stopping').length === processes);
      for (const c of inFlight) c.finish();
      const answers = await Promise.all(inFlight.map((c) => c.answer()));
      expect(answers.map((a) => [/^HTTP\/1\.1 200 OK\r\n/.test(a), a.includes('fcm:APA91bH-token-1001')])).toEqual(inFlight.map(() => [true, true]));
      expect(await s.waitFor((l) => l.msg === 'stopped' && l.pid === pid)).toMatchObject({ exitCode: 0 });
      for (let i = 0; i < 200 && alive(pid); i += 1) await new Promise((r) => setTimeout(r, 50));
      expect(alive(pid)).toBe(false);
      if (!underNpm) expect(await s.exited).toEqual({ code: 0, signal: null });
      expect(s.lines.filter((l) => l.msg === 'second signal: exiting now')).toEqual([]);
    } finally {
      if (pkg !== null) fs.rmSync(pkg, { recursive: true, force: true });
    }
  }, 60_000);
});
