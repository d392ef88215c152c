import net from 'node:net';
import { HostErrors } from '../src/basics/errors';
import { log } from '../src/basics/log';
import { ConnectionCap, Handovers } from '../src/transport/connection-cap';
import { loadConfig } from '../src/config';
import { isToken, MAIN, type Reply, request, type Service, servicesPerTest, TOKEN_PATH } from './helpers/service';
import { until } from './helpers/sms-gateway';

/**
 * No address holds the service (issue 30, rule 5). One client opening thousands of connections and
 * keeping each alive with a header byte a second used up the service's file descriptors, and every
 * new connection from anyone was reset. Now each client address holds MAX_CONNECTIONS_PER_ADDRESS
 * connections at most (the rest are closed as soon as accepted), with WORKERS=N too, and a client
 * must finish its headers within HEADERS_TIMEOUT_MS.
 */

const service = servicesPerTest();
/** A second loopback address (Linux answers the whole of 127/8): the attacker, apart from 127.0.0.1. */
const ATTACKER = '127.0.0.2';
const OTHER = '127.0.0.3';
const CAP = 100;
const ATTACK = 1500;
/**
 * The service's file-descriptor limit in these tests, far below the attack: without the cap the
 * attack uses every descriptor (a single process, or each of two workers), and the normal client's
 * connection is closed as soon as accepted (libuv's answer to EMFILE).
 */
const NOFILE = 512;
/** Headers that never end: one byte a second, a header value that grows forever. */
const DRIBBLE = 'GET /PushNotificationMobile.asmx/GetTokenDevice?id=dev-1001 HTTP/1.1\r\nHost: school.example\r\nX-Slow: ';

/**
 * An attacker's connections, each sending its next header byte every second. `closed` counts those
 * the service closed; `open` those it holds.
 */
class SlowClients {
  readonly sockets = new Set<net.Socket>();
  closed = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly sent = new Map<net.Socket, number>();

  constructor(
    private readonly port: number,
    private readonly from: string,
  ) {
    this.timer = setInterval(() => {
      for (const s of this.sockets) this.next(s);
    }, 1000);
  }

  get open(): number {
    return this.sockets.size;
  }

  /** Opens `count` connections, at most 100 at a time, each resolved once connected (or closed). */
  async connect(count: number): Promise<void> {
    for (let done = 0; done < count; done += 100) {
      await Promise.all(Array.from({ length: Math.min(100, count - done) }, () => this.one()));
    }
  }

  private one(): Promise<void> {
    return new Promise((resolve) => {
      const socket = net.connect({ port: this.port, host: '127.0.0.1', localAddress: this.from });
      socket.on('error', () => undefined);
      socket.once('connect', () => {
        this.sockets.add(socket);
        this.next(socket);
        resolve();
      });
      socket.once('close', () => {
        this.sockets.delete(socket);
        this.closed += 1;
        resolve();
      });
      socket.resume();
    });
  }

  private next(socket: net.Socket): void {
    const at = this.sent.get(socket) ?? 0;
    this.sent.set(socket, at + 1);
    socket.write(at < DRIBBLE.length ? DRIBBLE[at]! : 'a');
  }

  /** Closes every connection from this side (not counted as closed by the service). */
  leave(): void {
    clearInterval(this.timer);
    const mine = [...this.sockets];
    this.sockets.clear();
    for (const s of mine) {
      s.removeAllListeners('close');
      s.destroy();
    }
  }
}

const attackers: SlowClients[] = [];
const attacker = (s: Service, from = ATTACKER) => {
  const a = new SlowClients(s.port, from);
  attackers.push(a);
  return a;
};
afterEach(() => {
  for (const a of attackers.splice(0)) a.leave();
});

/** A sample of the service's /metrics, or NaN when it is not there. */
async function metric(s: Service, series: string): Promise<number> {
  const body = (await request(s.adminPort, '/metrics')).body;
  const line = body.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? NaN : Number(line.slice(series.length + 1));
}
/** GetTokenDevice on a new connection from `from`: the whole answer's status and body. */
function tokenFrom(port: number, from: string): Promise<Reply> {
  return request(port, TOKEN_PATH, { localAddress: from });
}

const REFUSED = 'asmx_connections_refused_total{reason="per_address"}';
const OPEN = 'asmx_connections_open';

/** The service under a low file-descriptor limit, with the cap at CAP and time-outs the attack never reaches. */
const capped = (env: Record<string, string> = {}) =>
  service({
    command: ['prlimit', `--nofile=${NOFILE}`, process.execPath, MAIN],
    env: { MAX_CONNECTIONS_PER_ADDRESS: String(CAP), REQUEST_TIMEOUT_MS: '600000', HEADERS_TIMEOUT_MS: '600000', ...env },
  });

/** The attack: ATTACK slow connections from ATTACKER; the service holds CAP and closes the rest, and a normal client is served. */
async function attackHolds(s: Service): Promise<SlowClients> {
  const a = attacker(s);
  await a.connect(ATTACK);
  await until(`the service closes ${ATTACK - CAP} of the attacker's connections`, () => a.closed >= ATTACK - CAP, 60_000);
  // Anyone else is answered, during the attack (without the cap the connection is closed at once).
  expect(isToken(await tokenFrom(s.port, OTHER))).toBe(true);
  expect([a.closed, a.open]).toEqual([ATTACK - CAP, CAP]);
  expect(await metric(s, REFUSED)).toBe(ATTACK - CAP);
  await until('the normal client is counted out again', async () => (await metric(s, OPEN)) === CAP);
  // One line for the whole attack, not one per connection.
  const lines = s.lines.filter((l) => l.msg === 'connection refused: too many open from one address');
  expect(lines.map((l) => [l.level, l.client, l.limit])).toEqual([['warn', ATTACKER, CAP]]);
  return a;
}

/** After the attacker leaves, its count is back to 0: the address gets CAP connections again, no more. */
async function countReleased(s: Service, a: SlowClients): Promise<void> {
  a.leave();
  await until('every connection is counted out', async () => (await metric(s, OPEN)) === 0, 30_000);
  const again = attacker(s);
  await again.connect(CAP + 50);
  await until('the 50 over the cap are closed', () => again.closed >= 50, 30_000);
  expect([again.closed, again.open]).toEqual([50, CAP]);
  expect(await metric(s, REFUSED)).toBe(ATTACK - CAP + 50);
}

test(`one address opening ${ATTACK} slow connections holds ${CAP}; a normal client is served; the address is counted down as they close`, async () => {
  const s = await capped();
  const a = await attackHolds(s);
  await countReleased(s, a);
}, 180_000);

test('WORKERS=2: the primary caps the address across both workers, and a worker killed releases the connections it held', async () => {
  const s = await capped({ WORKERS: '2' });
  const a = await attackHolds(s);
  // The normal client's request named a worker; round robin gave it half of the attacker's connections.
  const victim = s.lines.find((l) => l.msg === 'request')!.pid;
  process.kill(victim, 'SIGKILL');
  await s.waitFor((l) => l.msg === 'worker died; starting another' && l.workerPid === victim);
  await countReleased(s, a);
}, 180_000);

test('CONNECTION_LIMIT_EXEMPT: a listed address (the proxy in front) is never capped; others still are', async () => {
  const s = await capped({ MAX_CONNECTIONS_PER_ADDRESS: '5', CONNECTION_LIMIT_EXEMPT: `10.0.0.0/8,${ATTACKER}` });
  expect(s.lines.find((l) => l.msg.startsWith('listening on '))!.msg).toContain(
    `connections per address not capped for 10.0.0.0/8, ${ATTACKER}`,
  );
  const proxy = attacker(s, ATTACKER);
  const other = attacker(s, OTHER);
  await proxy.connect(20);
  await other.connect(20);
  await until('the other address is held to 5', () => other.closed >= 15, 30_000);
  await until('every connection held is counted', async () => (await metric(s, OPEN)) === 25);
  expect([proxy.closed, proxy.open, other.closed, other.open]).toEqual([0, 20, 15, 5]);
  expect(await metric(s, REFUSED)).toBe(15);
}, 60_000);

test("HEADERS_TIMEOUT_MS: headers still arriving after it get http.sys's 408, long before REQUEST_TIMEOUT_MS; a slow body and an idle keep-alive connection do not", async () => {
  const s = await service({ env: { HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '60000' } });
  const started = Date.now();
  const answer = await new Promise<string>((resolve) => {
    const socket = net.connect({ port: s.port, host: '127.0.0.1' });
    let got = '';
    let at = 0;
    const timer = setInterval(() => socket.write(at < DRIBBLE.length ? DRIBBLE[at++]! : 'a'), 100);
    socket.on('data', (d) => (got += d.toString('latin1')));
    socket.on('error', () => undefined);
    socket.once('close', () => {
      clearInterval(timer);
      resolve(got);
    });
  });
  const page = HostErrors.timeout();
  expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
  expect(answer).toContain('\r\nConnection: close\r\n');
  expect(answer.slice(answer.indexOf('\r\n\r\n') + 4)).toBe(page.body);
  // Far from the request time-out (60 s), whatever the machine's load.
  expect(Date.now() - started).toBeLessThan(30_000);

  // A body sent slowly over 2.5 s is the request time-out's business, not the headers'.
  const body = 'id=dev-1001';
  const slowBody = await new Promise<string>((resolve) => {
    const socket = net.connect({ port: s.port, host: '127.0.0.1' });
    let got = '';
    socket.on('data', (d) => (got += d.toString('latin1')));
    socket.on('error', () => undefined);
    socket.once('close', () => resolve(got));
    socket.write(
      `POST /PushNotificationMobile.asmx/GetTokenDevice HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    let at = 0;
    const timer = setInterval(() => {
      socket.write(body[at++]!);
      if (at === body.length) clearInterval(timer);
    }, 2500 / body.length);
  });
  expect(slowBody).toMatch(/^HTTP\/1\.1 200 OK\r\n/);

  // An idle keep-alive connection stays for KEEPALIVE_TIMEOUT_MS, however long past the headers' time-out.
  const socket = net.connect({ port: s.port, host: '127.0.0.1' });
  socket.on('error', () => undefined);
  let got = '';
  socket.on('data', (d) => (got += d.toString('latin1')));
  const answers = () => got.split('HTTP/1.1 200 OK\r\n').length - 1;
  const get = `GET ${TOKEN_PATH} HTTP/1.1\r\nHost: x\r\n\r\n`;
  socket.write(get);
  await until('the first answer', () => answers() === 1);
  await new Promise((r) => setTimeout(r, 2500));
  expect(socket.destroyed).toBe(false);
  socket.write(get);
  await until('the second answer, on the same connection', () => answers() === 2);
  socket.destroy();
}, 40_000);

describe('the count (transport/connection-cap.ts)', () => {
  const limits = (perAddress: number, exempt = '') =>
    loadConfig({ MAX_CONNECTIONS_PER_ADDRESS: String(perAddress), CONNECTION_LIMIT_EXEMPT: exempt }).connections;

  test('per address, an IPv4-mapped peer as its IPv4 address, an IPv6 peer by its /64; released once, however often told', () => {
    let refused = 0;
    const cap = new ConnectionCap(limits(2), () => (refused += 1));
    const warn = jest.spyOn(log, 'warn').mockImplementation(() => undefined);
    try {
      const a = cap.admit('192.0.2.1')!;
      cap.admit('::ffff:192.0.2.1');
      expect(cap.admit('192.0.2.1')).toBeNull();
      expect(cap.admit('192.0.2.2')).not.toBeNull();
      cap.admit('2001:db8:0:1::1');
      cap.admit('2001:db8:0:1:ffff::2');
      expect(cap.admit('2001:db8:0:1::3')).toBeNull();
      expect(cap.admit('2001:db8:0:2::1')).not.toBeNull();
      expect([cap.open, refused]).toEqual([6, 2]);
      a.release();
      a.release();
      expect(cap.open).toBe(5);
      expect(cap.admit('192.0.2.1')).not.toBeNull();
      expect(cap.admit('192.0.2.1')).toBeNull();
      // A peer already gone has no address: closed, not counted.
      expect(cap.admit(undefined)).toBeNull();
      // One line per address a minute, whatever the refusals.
      expect(warn.mock.calls.map(([, fields]) => (fields as { client: string }).client)).toEqual(['192.0.2.1', '2001:db8:0:1::/64']);
    } finally {
      warn.mockRestore();
    }
  });

  test('0 turns the cap off (connections are still counted); an exempt range is never refused; by default a proxy on this machine is exempt', () => {
    const off = new ConnectionCap(limits(0), () => undefined);
    const admitted = (cap: ConnectionCap, address: string, times: number) =>
      Array.from({ length: times }, () => cap.admit(address)).filter((t) => t !== null).length;
    expect(admitted(off, '192.0.2.1', 1000)).toBe(1000);
    expect(off.open).toBe(1000);
    const cap = new ConnectionCap(limits(1, '10.0.0.0/8'), () => undefined);
    expect([admitted(cap, '10.1.2.3', 2), admitted(cap, '::ffff:10.1.2.3', 1), admitted(cap, '11.0.0.1', 2)]).toEqual([2, 1, 1]);
    const byDefault = new ConnectionCap(loadConfig({ MAX_CONNECTIONS_PER_ADDRESS: '1' }).connections, () => undefined);
    expect([admitted(byDefault, '127.0.0.1', 3), admitted(byDefault, '::1', 3), admitted(byDefault, '127.0.0.2', 3)]).toEqual([3, 3, 1]);
    // Set empty, nothing is exempt.
    expect(admitted(new ConnectionCap(limits(1, ''), () => undefined), '127.0.0.1', 3)).toBe(1);
  });

  test('handed-over connections: released by the word closed or their holder ending, never twice; one its holder ended without taking comes back with its ticket', () => {
    const cap = new ConnectionCap(limits(10), () => undefined);
    const handedOver = new Handovers<string, string>();
    const hand = (holder: string, copy: string) => handedOver.add(holder, copy, cap.admit('192.0.2.1')!);
    const [a, b, c, d, e] = [hand('w1', 'a'), hand('w1', 'b'), hand('w2', 'c'), hand('w2', 'd'), hand('w2', 'e')];
    expect(cap.open).toBe(5);
    // Taken: the sender's copy, once, to close; the ticket stays with the holder.
    expect([handedOver.taken('w1', a!), handedOver.taken('w1', a!), handedOver.taken('w2', b!)]).toEqual(['a', undefined, undefined]);
    expect(handedOver.closed('w1', a!)).toBeUndefined();
    handedOver.closed('w1', a!);
    // A word from the wrong holder (or a late one) changes nothing.
    handedOver.closed('w2', b!);
    expect(cap.open).toBe(4);
    // Closed before it was taken (the holder got no handle): the copy comes back to be closed.
    expect(handedOver.closed('w1', b!)).toBe('b');
    expect(cap.open).toBe(3);
    // A handover that failed: back with its ticket, for another holder; then it is no longer w2's.
    handedOver.taken('w2', c!);
    expect(handedOver.withdraw('w2', c!)).toBeUndefined();
    const back = handedOver.withdraw('w2', d!)!;
    expect(back.copy).toBe('d');
    expect(handedOver.withdraw('w2', d!)).toBeUndefined();
    // w2 ends: c (taken) closed with it; e (not taken) comes back, its ticket still counted.
    const gone = handedOver.gone('w2');
    expect([gone.closed, gone.untaken.map((u) => u.copy)]).toEqual([1, ['e']]);
    expect(cap.open).toBe(2);
    expect(handedOver.gone('w2')).toEqual({ closed: 0, untaken: [] });
    handedOver.closed('w2', e!);
    expect(cap.open).toBe(2);
    // Handed again, each to a new holder, and released there once.
    const again = [handedOver.add('w3', back.copy, back.ticket), handedOver.add('w3', gone.untaken[0]!.copy, gone.untaken[0]!.ticket)];
    for (const id of again) handedOver.taken('w3', id);
    handedOver.closed('w3', again[0]!);
    expect(cap.open).toBe(1);
    handedOver.gone('w3');
    back.ticket.release();
    expect(cap.open).toBe(0);
  });
});
