import http from 'node:http';
import { parseMetrics } from './helpers/prom-text';
import { isToken, request, type Service, servicesPerTest, tokenRequest } from './helpers/service';

/**
 * The log lines waiting for stderr are a budget (MAX_LOG_BUFFER_BYTES): with stderr taking no writes (a
 * stalled journald, a pipe nobody reads), every request still adds a line, and without the bound each
 * one stayed in the process's memory. Past it a line is dropped and counted, the service answers as
 * before, and once stderr takes writes again one line says how many went.
 */

const service = servicesPerTest();
const BUFFER = 64 * 1024;
const TOLD = 'log lines dropped: stderr took no writes while MAX_LOG_BUFFER_BYTES were waiting';

async function dropped(s: Service): Promise<number> {
  const metrics = parseMetrics((await request(s.adminPort, '/metrics')).body);
  return metrics.find((m) => m.name === 'asmx_log_lines_dropped_total')?.value ?? Number.NaN;
}

/** `n` GetTokenDevice requests on a few keep-alive connections: how many were answered with the token. */
async function tokens(s: Service, n: number, agent: http.Agent): Promise<number> {
  let answered = 0;
  const worker = async (count: number) => {
    for (let i = 0; i < count; i += 1) if (isToken(await tokenRequest(s.port, false, agent))) answered += 1;
  };
  await Promise.all(Array.from({ length: 4 }, () => worker(n / 4)));
  return answered;
}

test.each([
  ['one process', {}],
  ['WORKERS=2', { WORKERS: '2' }],
])(
  '%s: stderr taking no writes, request lines past MAX_LOG_BUFFER_BYTES are dropped and counted, never held; told of once it takes writes again',
  async (_name, env) => {
    const s = await service({ env: { ...env, MAX_LOG_BUFFER_BYTES: String(BUFFER) } });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
    try {
      expect(await dropped(s)).toBe(0);
      // Nobody reads the service's stderr from here on: the pipe fills, then the lines wait in the service.
      s.proc.stderr!.pause();
      // Until every process's budget is full, which a batch whose every line was dropped shows (a line is
      // some 300 bytes; the pipe holds some hundreds of KiB more; a cluster's workers fill theirs apart).
      for (let sent = 0; ; sent += 200) {
        expect(sent).toBeLessThan(40_000);
        const before = await dropped(s);
        expect(await tokens(s, 200, agent)).toBe(200);
        if ((await dropped(s)) - before >= 200) break;
      }
      // From now on every request's line is dropped: none is kept, and every request is answered.
      const before = await dropped(s);
      expect(await tokens(s, 2000, agent)).toBe(2000);
      const after = await dropped(s);
      expect(after - before).toBeGreaterThanOrEqual(2000);

      s.proc.stderr!.resume();
      // Each process tells of its own drops (a cluster's workers write to the same stderr), together all of them.
      const total = await dropped(s);
      const told = () => s.lines.filter((l) => l.msg === TOLD).reduce((sum, l) => sum + Number(l.dropped), 0);
      await s.waitFor(() => told() >= total);
      expect(told()).toBe(total);
      expect(s.lines.find((l) => l.msg === TOLD)).toMatchObject({ level: 'warn' });
      // And request lines are written again.
      const requestLines = () => s.lines.filter((l) => l.msg === 'request').length;
      const seen = requestLines();
      expect(isToken(await tokenRequest(s.port, false, agent))).toBe(true);
      await s.waitFor(() => requestLines() > seen);
    } finally {
      agent.destroy();
    }
  },
  120_000,
);
