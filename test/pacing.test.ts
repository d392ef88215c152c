import { spawn } from 'node:child_process';
import fs from 'node:fs';
import type http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { HostErrors } from '../src/basics/errors';
import { loadConfig } from '../src/config';
import { closedConnections } from '../src/transport/closed';
import { createServer } from '../src/transport/server';
import { isPaced, pacing } from '../src/transport/pacing';
import { freePort, MAIN, request, servicesPerTest, TOKEN_PATH } from './helpers/service';
import { until } from './helpers/sms-gateway';

/**
 * A connection's requests are read only as fast as its answers are taken (issue 38, point 1). A
 * client writing pipelined requests without reading the answers made the service run and hold every
 * one of them: RSS grew by a gigabyte in 15 s, another client waited seconds for an answer, and under
 * a 384 MiB heap the process died of it.
 */

const limits = loadConfig({}).limits;
/** The flooding client, a process of its own (see the file), whose one connection the small tests use here. */
const FLOODER = path.join(__dirname, 'helpers', 'pipeline-flood.js');
const { pipeliner } = require(FLOODER) as { pipeliner: (port: number, requests: string | Buffer, from?: string) => net.Socket };
const GET = (id: string) => `GET /x?id=${id} HTTP/1.1\r\nHost: school.example\r\n\r\n`;

/** An in-process server (the service's own listener) whose handler answers on the next turn with `size` bytes. */
async function listen(size: number): Promise<{ server: http.Server; port: number; started: () => number }> {
  let started = 0;
  const body = 'x'.repeat(size);
  const server = createServer(limits, (req, res) => {
    started += 1;
    setImmediate(() => res.end(`${req.url}\n${body}`));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as net.AddressInfo).port, started: () => started };
}

describe('pipelined requests', () => {
  it("every supported Node: the connection is paced (node's parser listeners were found and taken over)", async () => {
    const { server, port } = await listen(1);
    const paced = new Promise<boolean>((resolve) =>
      server.once('connection', (socket: net.Socket) => setImmediate(() => resolve(isPaced(socket)))),
    );
    const client = net.connect(port, '127.0.0.1');
    expect(await paced).toBe(true);
    client.destroy();
    server.close();
  });

  it('are all answered, in order, one at a time, also when the client half-closes after sending them', async () => {
    let running = 0;
    let most = 0;
    const server = createServer(limits, (req, res) => {
      running += 1;
      most = Math.max(most, running);
      setTimeout(() => {
        running -= 1;
        res.end(`${req.url}\n`);
      }, 1);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const socket = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
    const ids = Array.from({ length: 300 }, (_, i) => String(i));
    socket.end(ids.map(GET).join(''));
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (text += chunk));
    await new Promise((resolve) => socket.once('close', resolve));
    server.close();
    const answered = [...text.matchAll(/\/x\?id=(\d+)\n/g)].map((m) => m[1]);
    expect(answered).toEqual(ids);
    expect(most).toBe(1);
  });

  it.each([100, 3000, 200_000])(
    'a request with a body of %i bytes pipelined behind another gets its whole body once its turn comes',
    async (size) => {
      const server = createServer(limits, (req, res) => {
        let bytes = 0;
        req.on('data', (chunk: Buffer) => (bytes += chunk.length));
        req.on('end', () => res.end(`${req.method} ${bytes}\n`));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const socket = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
      const post = `POST /x HTTP/1.1\r\nHost: school.example\r\nContent-Length: ${size}\r\n\r\n${'b'.repeat(size)}`;
      socket.end(GET('1') + post + GET('2'));
      let text = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => (text += chunk));
      await new Promise((resolve) => socket.once('close', resolve));
      server.close();
      expect([...text.matchAll(/^(GET|POST) (\d+)$/gm)].map((m) => m[0])).toEqual(['GET 0', `POST ${size}`, 'GET 0']);
    },
  );

  it('a client that never reads: its requests are read only as fast as the kernel takes the answers, and few are held', async () => {
    // Answers of 64 KiB: the kernel's buffers of a loopback connection hold a few hundred at most.
    const { server, port, started } = await listen(64 * 1024);
    const flood = GET('flood').repeat(2000);
    const sockets = Array.from({ length: 4 }, () => pipeliner(port, flood));
    // Stalled: no request started for a second.
    for (let before = -1; started() !== before; ) {
      before = started();
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    // Before pacing every request read was run: hundreds of thousands within these seconds.
    expect(started()).toBeLessThan(4 * 1000);
    // What is held: requests of one slice and about one read of bytes per connection.
    expect(pacing.waiting).toBeLessThanOrEqual(4 * 30);
    expect(pacing.heldBytes).toBeLessThanOrEqual(4 * 256 * 1024);
    for (const socket of sockets) socket.destroy();
    await until('nothing is held', () => pacing.waiting === 0 && pacing.held === 0 && pacing.heldBytes === 0, 5000);
    server.close();
  });

  it('a client that never reads is closed after SEND_TIMEOUT_MS, counted', async () => {
    const server = createServer({ ...limits, sendTimeoutMs: 500 }, (_req, res) => res.end('y'.repeat(1024 * 1024)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const before = closedConnections.send_timeout;
    const socket = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
    socket.on('error', () => undefined);
    socket.pause();
    socket.write(GET('big').repeat(50));
    // The client, reading nothing, does not notice; the server's count does.
    await until('the connection is closed', () => closedConnections.send_timeout === before + 1, 10_000);
    socket.destroy();
    server.close();
  });

  it("a request half sent when SEND_TIMEOUT_MS passes gets the request time-out's 408, not a silent close; a connection with nothing asked is closed, counted idle", async () => {
    // The send time-out far shorter than the request's: what a loaded event loop does to the default
    // pair (node looks at the request time-out only every connectionsCheckingInterval).
    const slow = { ...limits, requestTimeoutMs: 60_000, headersTimeoutMs: 60_000, sendTimeoutMs: 300 };
    const server = createServer(slow, (req, res) => {
      req.resume();
      req.on('end', () => res.end('whole'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    /** What the server sent on a connection given `bytes`, once it closed it. */
    const answer = (bytes: string) =>
      new Promise<string>((resolve) => {
        const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
        let got = '';
        socket.on('data', (d) => (got += d.toString('latin1')));
        socket.on('error', () => undefined);
        socket.once('close', () => resolve(got));
      });
    // For the half-sent requests the time-out is armed once the server has read their bytes: a
    // machine too busy to read them within 300 ms would close a connection that, as far as it
    // knows, asked nothing yet (idle, as the third one is).
    let armOnData = true;
    const idleBefore = closedConnections.idle;
    server.on('connection', (socket: net.Socket) => {
      if (!armOnData) return;
      socket.setTimeout(0);
      socket.once('data', () => socket.setTimeout(slow.sendTimeoutMs));
    });
    const post = 'POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n';
    const halves = await Promise.all([answer('POST /x HTTP/1.1\r\nHost: x\r\nContent-Le'), answer(`${post}abc`)]);
    for (const half of halves) {
      expect(half).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
      expect(half).toContain('\r\nConnection: close\r\n');
      expect(half.slice(half.indexOf('\r\n\r\n') + 4)).toBe(HostErrors.timeout().body);
    }
    armOnData = false;
    expect(await answer('')).toBe('');
    // The two answered are not counted as closed unanswered; the one that asked nothing is.
    expect(closedConnections.idle).toBe(idleBefore + 1);
    server.close();
  });
});

const service = servicesPerTest();

/**
 * The built service under a 384 MiB heap, `connections` non-reading pipelining connections spread
 * over the addresses `from` for `seconds`, and another address asking every quarter second: alive,
 * all answered, RSS grown by less than 200 MB. An answer not come in 15 s counts as none: before
 * pacing, none came at all while the flood lasted; on a quiet 2-core machine each comes within a
 * second (docs/security.md has the figures), and the margin is for a machine busy with other work.
 */
async function flooded(from: string[], connections: number, seconds: number): Promise<void> {
  // Quiet (a log line per request would be the test's own flood), so the port is chosen here.
  const port = await freePort();
  const s = await service({
    command: [process.execPath, '--max-old-space-size=384', '--max-semi-space-size=2', MAIN],
    env: { LOG_LEVEL: 'warn', PORT: String(port) },
    waitListening: false,
  });
  await until(
    'listening',
    () =>
      request(port, TOKEN_PATH).then(
        (r) => r.status === 200,
        () => false,
      ),
    15_000,
  );
  const rss = () => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${s.proc.pid}/status`, 'utf8'))![1]) * 1024;
  const start = rss();
  let most = start;
  const attacker = spawn(process.execPath, [FLOODER, String(port), String(connections), from.join(','), TOKEN_PATH], { stdio: 'ignore' });
  const gone = new Promise((resolve) => attacker.once('exit', resolve));
  const statuses: number[] = [];
  try {
    // A new connection every quarter second (as many as `seconds` hold, however late the timers), each
    // waiting for its answer on its own.
    const replies: Promise<number>[] = [];
    for (let i = 0; i < seconds * 4; i += 1) {
      replies.push(
        Promise.race([
          request(port, TOKEN_PATH, { localAddress: '127.0.0.3' }).then(
            (r) => r.status,
            () => -1,
          ),
          new Promise<number>((resolve) => setTimeout(resolve, 15_000, 0).unref()),
        ]),
      );
      await new Promise((resolve) => setTimeout(resolve, 250));
      most = Math.max(most, rss());
    }
    statuses.push(...(await Promise.all(replies)));
  } finally {
    attacker.kill('SIGKILL');
    await gone;
  }
  expect(s.proc.exitCode).toBeNull();
  expect(statuses.filter((status) => status !== 200)).toEqual([]);
  expect(most - start).toBeLessThan(200 * 1024 * 1024);
}

describe('the built service under a pipelining flood of connections that never read', () => {
  it('one address, 100 connections, 20 s: stays alive under a 384 MiB heap, grows by less than 200 MB, and another address is answered throughout', async () => {
    await flooded(['127.0.0.2'], 100, 20);
  }, 90_000);

  it('ten addresses, 300 connections, 10 s: the same', async () => {
    await flooded(
      Array.from({ length: 10 }, (_, i) => `127.0.1.${i + 1}`),
      300,
      10,
    );
  }, 90_000);
});
