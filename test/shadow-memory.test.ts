import fs from 'node:fs';
import net from 'node:net';
import { total } from '../src/console/samples';
import { parseMetrics } from './helpers/prom-text';
import { Copier, type CopyResult } from '../src/shadow/copier';
import { frameSize } from '../src/shadow/frames';
import { request, servicesPerTest, type Service } from './helpers/service';

/**
 * Shadowing's memory is bounded in bytes whatever the legacy host does (SHADOW_QUEUE_BYTES): the built
 * service shadowing to stand-ins in this file that take copies and never answer, or answer with far
 * more than any answer of the service. The memory of the service and of its copier is read from
 * /proc (their peak resident set, VmHWM), so the bound holds at every moment, not just at the end.
 */

const start = servicesPerTest();
const MiB = 1024 * 1024;

/** Memory and child processes are read from /proc. */
const linux = process.platform === 'linux' ? test : test.skip;

/** A stand-in legacy host: accepts connections and never reads or answers them. */
async function hangingHost(): Promise<{ url: string; close(): void }> {
  const sockets: net.Socket[] = [];
  const server = net.createServer((s) => void sockets.push(s));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

/**
 * A stand-in legacy host answering every request with `bytes` of XML, framed as `framing` says (by
 * hand, so that each framing is the one named), written as the reader takes it.
 */
async function floodingHost(bytes: number, framing: 'length' | 'chunked' | 'close'): Promise<{ url: string; close(): void }> {
  const piece = Buffer.alloc(MiB, 'a');
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined).on('close', () => sockets.delete(socket));
    // A copy is a GET: its first bytes are enough to answer.
    socket.once('data', () => {
      const framed = { length: `Content-Length: ${bytes}`, chunked: 'Transfer-Encoding: chunked', close: 'Connection: close' }[framing];
      socket.write(`HTTP/1.1 200 OK\r\nContent-Type: text/xml; charset=utf-8\r\n${framed}\r\n\r\n`);
      let left = bytes;
      const more = () => {
        while (left > 0 && !socket.destroyed) {
          const n = Math.min(left, piece.length);
          left -= n;
          if (framing === 'chunked') socket.write(`${n.toString(16)}\r\n`);
          socket.write(piece.subarray(0, n));
          if (!socket.write(framing === 'chunked' ? '\r\n' : '')) return void socket.once('drain', more);
        }
        socket.end(framing === 'chunked' ? '0\r\n\r\n' : '');
      };
      more();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

/** The copier: the service's one child process (started with the first copy). */
function copierOf(service: Service): number {
  const pid = service.proc.pid!;
  const children = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean);
  expect(children).toHaveLength(1);
  return Number(children[0]);
}

/** A process's peak resident set so far (VmHWM), in MiB. */
function peakMiB(pid: number): number {
  const kb = /^VmHWM:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(kb![1]) / 1024;
}

async function metrics(service: Service) {
  return parseMetrics((await request(service.adminPort, '/metrics')).body);
}

/** Waits (polling the admin listener) until `done` holds for the service's metrics; copies are counted after their client's answer. */
async function until(service: Service, done: (m: Awaited<ReturnType<typeof metrics>>) => boolean, what: string) {
  for (let i = 0; i < 600; i++) {
    const m = await metrics(service);
    if (done(m)) return m;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(
    `never: ${what}; the shadow counters: ${JSON.stringify((await metrics(service)).filter((s) => s.name.startsWith('asmx_shadow')))}`,
  );
}

const exchanges = (m: Awaited<ReturnType<typeof metrics>>, labels: Record<string, string>) =>
  total(m, 'asmx_shadow_exchanges_total', labels);

/** GetTokenDevice over HTTP POST with a form as large as `bytes` (ASMX reads the fields it knows and ignores the rest). */
function largePost(port: number, bytes: number) {
  const head = 'id=dev-1001&pad=';
  const body = head + 'x'.repeat(bytes - head.length);
  return request(port, '/PushNotificationMobile.asmx/GetTokenDevice', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body,
  });
}

linux(
  'a legacy host that takes copies and never answers, and 120 requests of 3 MiB: the service and its copier stay small, the copies beyond SHADOW_QUEUE_BYTES are dropped (reason bytes), every client is answered',
  async () => {
    const host = await hangingHost();
    try {
      const service = await start({
        env: { SHADOW_URL: host.url, SHADOW_QUEUE_BYTES: String(8 * MiB), SHADOW_TIMEOUT_MS: '600000', SHADOW_LOG: '' },
      });
      const N = 120;
      const answers: number[] = [];
      // Four clients at a time, each waiting for its answer: the service reads at most four bodies at once.
      for (let i = 0; i < N; i += 4) {
        const batch = await Promise.all([0, 1, 2, 3].map(() => largePost(service.port, 3 * MiB)));
        for (const r of batch) answers.push(r.status === 200 && r.body.includes('fcm:APA91bH-token-1001') ? 200 : r.status);
      }
      expect(answers).toEqual(Array(N).fill(200));
      // Two copies of 3 MiB fit in 8 MiB, and with the host never answering they stay held: every other one is dropped.
      const m = await until(service, (s) => exchanges(s, { outcome: 'dropped' }) >= N - 2, `${N - 2} copies dropped`);
      expect(exchanges(m, { outcome: 'dropped', reason: 'bytes' })).toBe(N - 2);
      expect(exchanges(m, {})).toBe(N - 2);
      const held = total(m, 'asmx_shadow_held_bytes');
      expect(held).toBeGreaterThan(6 * MiB);
      expect(held).toBeLessThanOrEqual(8 * MiB);
      const [ours, its] = [peakMiB(service.proc.pid!), peakMiB(copierOf(service))];
      // Measured: 180 and 60 MiB (the service peaks at 180 MiB under this load with shadowing off too: the
      // bodies it read, waiting for the collector). Bounded by count alone they reached 485 and 470 MiB
      // (every copy held; 1.9 and 4.1 GB in the 1,100 copies of 4 MiB).
      expect({ service: ours, copier: its, under: ours < 300 && its < 120 }).toEqual({ service: ours, copier: its, under: true });
    } finally {
      host.close();
    }
  },
  120_000,
);

linux.each(['length', 'chunked', 'close'] as const)(
  'a legacy host answering 40 MiB (framed by %s): the copier reads no more than its cap, and each copy is dropped (reason answer_bytes), neither a match nor a difference',
  async (framing) => {
    const host = await floodingHost(40 * MiB, framing);
    try {
      // 8 MiB shared by four copies in flight: each answer is read up to 2 MiB.
      const service = await start({
        env: { SHADOW_URL: host.url, SHADOW_QUEUE_BYTES: String(8 * MiB), SHADOW_CONCURRENCY: '4', SHADOW_LOG: '' },
      });
      const N = 8;
      for (let i = 0; i < N; i++)
        expect((await request(service.port, '/PushNotificationMobile.asmx/GetTokenDevice?id=dev-1001')).body).toContain(
          'fcm:APA91bH-token-1001',
        );
      const m = await until(service, (s) => exchanges(s, {}) >= N, `${N} copies settled`);
      expect(exchanges(m, {})).toBe(N);
      expect(exchanges(m, { outcome: 'dropped', reason: 'answer_bytes' })).toBe(N);
      // Settled: nothing is held any more.
      expect(total(await until(service, (s) => total(s, 'asmx_shadow_held_bytes') === 0, 'nothing held'), 'asmx_shadow_held_bytes')).toBe(
        0,
      );
      // Measured: 55 to 70 MiB, as at its start (55) with at most 2 MiB read of each answer.
      const its = peakMiB(copierOf(service));
      expect({ copier: its, under: its < 100 }).toEqual({ copier: its, under: true });
    } finally {
      host.close();
    }
  },
  60_000,
);

linux(
  'legacy-first, a legacy host answering 10 MiB: the client gets all of it, the front keeps no more than the cap (2 MiB here) for a comparison, and the copy is dropped (reason answer_bytes)',
  async () => {
    const host = await floodingHost(10 * MiB, 'length');
    try {
      const front = await start({
        env: {
          SHADOW_URL: host.url,
          SHADOW_MODE: 'legacy-first',
          SHADOW_QUEUE_BYTES: String(8 * MiB),
          SHADOW_CONCURRENCY: '4',
          SHADOW_LOG: '',
        },
      });
      const N = 3;
      for (let i = 0; i < N; i++) {
        const answer = await request(front.port, '/PushNotificationMobile.asmx/GetTokenDevice?id=dev-1001');
        expect([answer.status, answer.body.length]).toEqual([200, 10 * MiB]);
      }
      const m = await until(front, (s) => exchanges(s, {}) >= N, `${N} copies counted`);
      expect([exchanges(m, {}), exchanges(m, { outcome: 'dropped', reason: 'answer_bytes' }), total(m, 'asmx_shadow_held_bytes')]).toEqual([
        N,
        N,
        0,
      ]);
    } finally {
      host.close();
    }
  },
  60_000,
);

describe("the copier's own budget", () => {
  const job = (body: number) => ({
    requestId: `r-${body}`,
    method: 'POST',
    url: '/PushNotificationMobile.asmx/GetTokenDevice',
    headers: [],
    body: Buffer.alloc(body),
    primary: { status: 200, headers: {}, body: '' },
    labels: { operation: 'GetTokenDevice', binding: 'httppost' },
  });

  test('a copy that does not fit beside those it holds is dropped at once (reason bytes), whatever the service sent', async () => {
    const host = await hangingHost();
    const results: CopyResult[] = [];
    try {
      const target = {
        origin: host.url.slice(0, -1),
        prefix: '',
        strip: 0,
        keepHost: false,
        primary: 'ours' as const,
        concurrency: 4,
        queue: 1000,
        pipeline: 16,
        timeoutMs: 500,
        queueBytes: MiB + 4096,
        secondary: null,
      };
      const copier = new Copier(target, (r) => results.push(r));
      const [a, b, c] = [job(MiB - 1024), job(MiB / 2), job(1000)];
      for (const j of [a, b, c]) copier.take(j, frameSize(j));
      // The first and the last fit; the second would take the copier past its budget.
      expect(results.map((r) => [r.requestId, r.outcome, r.outcome === 'dropped' ? r.reason : '', r.bytes])).toEqual([
        [b.requestId, 'dropped', 'bytes', frameSize(b)],
      ]);
      expect(copier.held).toBe(frameSize(a) + frameSize(c));
      // Unanswered, they settle at their time-out, and their bytes are given back.
      for (let i = 0; i < 200 && results.length < 3; i++) await new Promise((r) => setTimeout(r, 25));
      expect(results.slice(1).map((r) => [r.requestId, r.outcome, r.bytes])).toEqual([
        [a.requestId, 'error', frameSize(a)],
        [c.requestId, 'error', frameSize(c)],
      ]);
      expect(copier.held).toBe(0);
    } finally {
      host.close();
    }
  });
});
