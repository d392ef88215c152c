import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { legacyHost, until } from './helpers/legacy-host';
import { MAIN, request, type Service, servicesPerTest, TOKEN_PATH } from './helpers/service';

/**
 * A stop with shadowing on (issue 31, point 3): copies already handed to the copier get a short,
 * bounded chance to settle (min(SHADOW_TIMEOUT_MS, 2 s)), the rest are dropped (reason `stop`), and
 * the process logs "stopped" and exits 0, under `node`, `npm start` and WORKERS=2. The copier and its
 * channel never keep the process alive, so before this the stop ran out of work while it waited for
 * the copier's exit: exit 0 with no "stopped" line and the store never closed.
 */

const service = servicesPerTest();

const alive = (pid: number): boolean => {
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

/** A package whose start script runs the build, as the project's own `npm start` does. */
function npmPackage(): string {
  const pkg = fs.mkdtempSync(path.join(os.tmpdir(), 'student-info-npm-'));
  fs.writeFileSync(
    path.join(pkg, 'package.json'),
    JSON.stringify({ name: 'npm-start', version: '1.0.0', scripts: { start: `node ${MAIN}` } }),
  );
  return pkg;
}

/** `n` copied requests, each on a new connection (so that every worker of a cluster gets some). */
async function copied(s: Service, n: number): Promise<void> {
  for (let i = 0; i < n; i += 1) expect((await request(s.port, TOKEN_PATH)).status).toBe(200);
}

const linux = process.platform === 'linux' ? describe : describe.skip;
const linuxTest = process.platform === 'linux' ? test : test.skip;

linux.each([
  ['node', false, {}],
  ['npm start', true, {}],
  ['node, WORKERS=2', false, { WORKERS: '2' }],
])('%s', (_name, underNpm, env: Record<string, string>) => {
  test('copied requests, then SIGTERM: every copy compared, "stopped" logged by each process, exit 0', async () => {
    const host = await legacyHost();
    const pkg = underNpm ? npmPackage() : null;
    try {
      const s = await service({
        env: { SHADOW_URL: host.url, SHADOW_LOG: '', ...env },
        command: pkg === null ? undefined : ['npm', 'start', '--silent', '--prefix', pkg],
      });
      const pid = (await s.waitFor((l) => l.msg.startsWith('listening on '))).pid;
      await copied(s, 6);
      await until(() => host.answered() === 6);
      s.proc.kill('SIGTERM');
      const processes = env.WORKERS === '2' ? 3 : 1;
      await until(() => s.lines.filter((l) => l.msg === 'stopped').length === processes);
      expect(s.lines.filter((l) => l.msg === 'stopped').map((l) => l.exitCode)).toEqual(Array(processes).fill(0));
      expect(s.lines.find((l) => l.msg === 'stopped' && l.pid === pid)).toBeDefined();
      // npm itself ends by the signal; the service behind it exits 0 (the "stopped" line says so).
      if (underNpm) await until(() => !alive(pid));
      else expect(await s.exited).toEqual({ code: 0, signal: null });
    } finally {
      host.close();
      if (pkg !== null) fs.rmSync(pkg, { recursive: true, force: true });
    }
  }, 60_000);
});

linuxTest(
  'a legacy host that holds its answers: the stop waits no longer than min(SHADOW_TIMEOUT_MS, 2 s) for them, counts them dropped (stop), logs "stopped", exits 0',
  async () => {
    let release = (): void => undefined;
    const held = new Promise<void>((r) => (release = r));
    const host = await legacyHost(() => held);
    try {
      const s = await service({ env: { SHADOW_URL: host.url, SHADOW_LOG: '', SHADOW_TIMEOUT_MS: '600000' } });
      await copied(s, 3);
      await until(() => host.received() === 3);
      const signalled = Date.now();
      s.proc.kill('SIGTERM');
      expect(await s.waitFor((l) => l.msg === 'stopped', 30_000)).toMatchObject({ exitCode: 0 });
      expect(s.lines.find((l) => l.msg.startsWith('shadow copies given up at the stop'))).toMatchObject({ dropped: 3, settleMs: 2000 });
      // Well under the copies' own time-out (10 minutes): the bound is 2 s, the rest is the drain.
      expect(Date.now() - signalled).toBeLessThan(30_000);
      expect(await s.exited).toEqual({ code: 0, signal: null });
    } finally {
      release();
      host.close();
    }
  },
  60_000,
);

/** Copiers the test stopped: killed whatever happens, a stopped process never ends by itself. */
const stopped: number[] = [];

linuxTest(
  'a copier that gets no processor time (stopped: SIGSTOP, as the lowest priority on a machine busy with other work) does not hold the stop: "stopped", exit 0',
  async () => {
    const host = await legacyHost();
    try {
      const s = await service({ env: { SHADOW_URL: host.url, SHADOW_LOG: '' } });
      await copied(s, 3);
      await until(() => host.answered() === 3);
      const children = fs.readFileSync(`/proc/${s.proc.pid}/task/${s.proc.pid}/children`, 'utf8').split(' ').filter(Boolean);
      expect(children.length).toBe(1);
      const copier = Number(children[0]);
      stopped.push(copier);
      process.kill(copier, 'SIGSTOP');
      s.proc.kill('SIGTERM');
      // Before, the stop sent the copier SIGTERM, which a stopped process keeps pending, and waited for its exit: for ever.
      expect(await s.waitFor((l) => l.msg === 'stopped', 30_000)).toMatchObject({ exitCode: 0 });
      expect(await s.exited).toEqual({ code: 0, signal: null });
      expect(alive(copier)).toBe(false);
    } finally {
      host.close();
      for (const pid of stopped.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL');
    }
  },
  60_000,
);
