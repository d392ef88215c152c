import net from 'node:net';
import { ANSWER_TOO_LARGE, AnswerReader, KeptAnswer, MAX_ANSWER_BYTES, type WireAnswer } from '../src/shadow/answer';
import { Wire } from '../src/shadow/wire';

/** The copier's HTTP client (src/shadow/wire.ts): answers framed every way HTTP/1.1 frames them, however the bytes arrive. */

/** Feeds `raw` to a reader `size` bytes at a time; the answer, and whether it came before the last byte. */
function read(raw: string | Buffer, size: number, method = 'GET'): { answer: WireAnswer | null; early: boolean; reader: AnswerReader } {
  const bytes = Buffer.isBuffer(raw) ? raw : Buffer.from(raw, 'latin1');
  const kept = new KeptAnswer();
  const reader = new AnswerReader(method, kept);
  for (let i = 0; i < bytes.length; i += size) {
    // Each read in a buffer of its own that is overwritten once read, as the wire's shared read buffer is.
    const chunk = Buffer.from(bytes.subarray(i, i + size));
    const ended = reader.push(chunk);
    chunk.fill(0);
    if (ended) return { answer: kept.answer, early: i + size < bytes.length, reader };
  }
  return { answer: reader.end() ? kept.answer : null, early: false, reader };
}

const SIZES = [1, 2, 3, 7, 64, 100000];

describe('AnswerReader', () => {
  test.each(SIZES)('an answer framed by Content-Length, %i bytes at a time', (size) => {
    const { answer, early, reader } = read(
      'HTTP/1.1 200 OK\r\nContent-Type: text/xml; charset=utf-8\r\nContent-Length: 12\r\n\r\n<a>hello</a>',
      size,
    );
    expect(answer).toEqual({
      status: 200,
      headers: { 'content-type': 'text/xml; charset=utf-8', 'content-length': '12' },
      body: Buffer.from('<a>hello</a>'),
    });
    expect(early).toBe(false);
    expect(reader.keepAlive).toBe(true);
  });

  test.each(SIZES)('a chunked answer with extensions and trailers, %i bytes at a time', (size) => {
    const raw =
      'HTTP/1.1 500 Internal Server Error\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n1\r\n \r\n0005\r\nworld\r\n0\r\nX-Trailer: t\r\n\r\n';
    const { answer, reader } = read(raw, size);
    expect(answer?.status).toBe(500);
    expect(answer?.body.toString()).toBe('hello world');
    expect(answer?.headers['transfer-encoding']).toBe('chunked');
    expect(reader.keepAlive).toBe(true);
  });

  test.each(SIZES)('a chunked answer without trailers ends at its last chunk, %i bytes at a time', (size) => {
    expect(read('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n', size).answer?.body.toString()).toBe('abc');
  });

  test('an answer framed by the connection ends with it, and the connection is not used again', () => {
    const kept = new KeptAnswer();
    const reader = new AnswerReader('GET', kept);
    expect(reader.push(Buffer.from('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nsome'))).toBe(false);
    expect(reader.push(Buffer.from(' text'))).toBe(false);
    expect(reader.end()).toBe(true);
    expect(kept.answer.body.toString()).toBe('some text');
    expect(reader.keepAlive).toBe(false);
  });

  test('a connection that ends before the answer does gives no answer', () => {
    const reader = new AnswerReader('GET', new KeptAnswer());
    reader.push(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc'));
    expect(reader.end()).toBe(false);
    expect(new AnswerReader('GET', new KeptAnswer()).end()).toBe(false);
  });

  test('no body after HEAD, 204 and 304, whatever their Content-Length says', () => {
    expect(read('HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n', 1000, 'HEAD').answer?.body.length).toBe(0);
    expect(read('HTTP/1.1 204 No Content\r\n\r\n', 1000).answer?.status).toBe(204);
    expect(read('HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n', 1000).answer?.body.length).toBe(0);
  });

  test('an interim 100 Continue is passed over for the answer that follows', () => {
    const { answer } = read('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok', 5);
    expect(answer).toMatchObject({ status: 200, body: Buffer.from('ok') });
  });

  test('repeated headers are joined, as node joins them, except Content-Type and Content-Length (the first)', () => {
    const { answer } = read(
      'HTTP/1.1 200 OK\r\nCache-Control: private\r\ncache-control: max-age=0\r\nContent-Type: text/xml\r\nContent-Type: text/html\r\nContent-Length: 0\r\n\r\n',
      1000,
    );
    expect(answer?.headers).toEqual({ 'cache-control': 'private, max-age=0', 'content-type': 'text/xml', 'content-length': '0' });
  });

  test('Connection: close and HTTP/1.0 end the connection; bytes beyond the answer are counted', () => {
    expect(read('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n', 1000).reader.keepAlive).toBe(false);
    expect(read('HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n', 1000).reader.keepAlive).toBe(false);
    expect(read('HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n', 1000).reader.keepAlive).toBe(true);
    // Bytes beyond the answer are the next answer's, if a request is pipelined behind it (Wire ends a connection that sends bytes nothing asked for).
    expect(read('HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nab', 1000).reader.beyond).toBe(1);
  });

  test.each([
    ['not HTTP', 'SSH-2.0-OpenSSH\r\n\r\n'],
    ['a header without a colon', 'HTTP/1.1 200 OK\r\nbroken\r\n\r\n'],
    ['a bad Content-Length', 'HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n'],
    ['a Content-Length over the limit', `HTTP/1.1 200 OK\r\nContent-Length: ${MAX_ANSWER_BYTES + 1}\r\n\r\n`],
    ['a bad chunk size', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n'],
  ])('malformed framing is an error: %s', (_, raw) => {
    expect(() => new AnswerReader('GET', new KeptAnswer()).push(Buffer.from(raw))).toThrow();
  });

  test("an answer over the reader's cap is refused as soon as it shows: by its Content-Length, by a chunk's size line before its data, by its bytes; one of the cap is read", () => {
    const capped = (raw: string) => () => {
      const kept = new KeptAnswer();
      const reader = new AnswerReader('GET', kept, 10);
      reader.push(Buffer.from(raw, 'latin1'));
      return reader.end() ? kept.answer : null;
    };
    expect(capped('HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n')).toThrow(ANSWER_TOO_LARGE);
    expect(capped('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n6\r\nhello \r\n5\r\n')).toThrow(ANSWER_TOO_LARGE);
    expect(capped('HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n0123456789a')).toThrow(ANSWER_TOO_LARGE);
    expect(capped('HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n0123456789')()?.body.toString()).toBe('0123456789');
    expect(
      read('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n5\r\nworld\r\n0\r\n\r\n', 3).answer?.body.toString(),
    ).toBe('helloworld');
  });

  test("a chunk's data is kept as the reads it came in, joined once: a 1 MiB chunk read 4 KiB at a time is not copied again at every read", () => {
    const data = Buffer.alloc(1024 * 1024, 'x');
    const raw = Buffer.concat([
      Buffer.from(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${data.length.toString(16)}\r\n`),
      data,
      Buffer.from('\r\n0\r\n\r\n'),
    ]);
    const concat = jest.spyOn(Buffer, 'concat');
    try {
      expect(read(raw, 4096).answer?.body.equals(data)).toBe(true);
      const copied = concat.mock.results.reduce((sum, r) => sum + (r.value as Buffer).length, 0);
      expect(copied).toBeLessThan(2 * data.length);
    } finally {
      concat.mockRestore();
    }
  });

  test('a head that never ends is an error once it is too long to be one', () => {
    const reader = new AnswerReader('GET', new KeptAnswer());
    reader.push(Buffer.from('HTTP/1.1 200 OK\r\n'));
    expect(() => reader.push(Buffer.alloc(70000, 'a'))).toThrow(/too large/);
  });
});

describe('Wire', () => {
  interface Host {
    url: URL;
    connections: () => number;
    requests: string[];
    /** The most requests that had come on one connection, unanswered, at once: above 1 only if pipelined. */
    mostAtOnce: () => number;
  }

  /**
   * Runs `use` with a Wire to a host answering each request with `answer(requestText)` (null: say
   * nothing) and counting its connections; the host is gone afterwards, its connections with it.
   */
  async function withHost(
    answer: (request: string) => string | null,
    use: (wire: Wire, h: Host) => Promise<void>,
    wire = (url: URL) => new Wire(url),
  ): Promise<URL> {
    let connections = 0;
    let mostAtOnce = 0;
    const requests: string[] = [];
    const sockets = new Set<net.Socket>();
    const server = net.createServer((socket) => {
      connections++;
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      let got = '';
      let closed = false;
      socket.on('data', (d) => {
        got += d.toString('latin1');
        // Every whole request that has come, answered in order (HTTP/1.1 pipelining).
        const whole: string[] = [];
        for (;;) {
          const end = got.indexOf('\r\n\r\n');
          if (end === -1) break;
          const length = Number(/\r\ncontent-length: *(\d+)/i.exec(got.slice(0, end))?.[1] ?? 0);
          if (got.length < end + 4 + length) break;
          whole.push(got.slice(0, end + 4 + length));
          got = got.slice(end + 4 + length);
        }
        mostAtOnce = Math.max(mostAtOnce, whole.length);
        for (const request of whole) {
          if (closed) return;
          requests.push(request);
          const reply = answer(request);
          if (reply === null) return;
          socket.write(reply, 'latin1');
          if (/connection: close/i.test(reply)) {
            closed = true;
            socket.end();
          }
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = new URL(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}`);
    try {
      await use(wire(url), { url, connections: () => connections, requests, mostAtOnce: () => mostAtOnce });
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
    return url;
  }

  const get = (path: string) => Buffer.from(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);

  test('answers come back in full, one connection carrying request after request', async () => {
    const echo = (r: string) => `HTTP/1.1 200 OK\r\nContent-Length: ${r.split(' ')[1].length}\r\n\r\n${r.split(' ')[1]}`;
    await withHost(echo, async (wire, h) => {
      for (const path of ['/a', '/bb', '/ccc']) expect(((await wire.ask('GET', get(path), 2000)) as WireAnswer).body.toString()).toBe(path);
      expect(h.connections()).toBe(1);
      // The request went out byte for byte, a body after its head (given in parts, as the copier gives a copy's body: not joined to its head).
      const body = Buffer.from('<x>é</x>', 'utf8');
      await wire.ask('POST', [Buffer.from(`POST /p HTTP/1.1\r\nContent-Length: ${body.length}\r\n\r\n`), body], 2000);
      expect(Buffer.from(h.requests[3], 'latin1').subarray(-body.length)).toEqual(body);
    });
  });

  test('a connection the host closes is not used again', async () => {
    await withHost(
      () => 'HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok',
      async (wire, h) => {
        for (let i = 0; i < 3; i++) expect(((await wire.ask('GET', get('/'), 2000)) as WireAnswer).status).toBe(200);
        expect(h.connections()).toBe(3);
      },
    );
  });

  test('a body framed by the end of the connection is read to it', async () => {
    await withHost(
      () => 'HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end',
      async (wire) => expect(((await wire.ask('GET', get('/'), 2000)) as WireAnswer).body.toString()).toBe('until the end'),
    );
  });

  test('a host that says nothing is given up on at the time-out; one that refuses, at once', async () => {
    const url = await withHost(
      () => null,
      async (wire) => expect(await wire.ask('GET', get('/'), 200)).toBe('no answer within 200 ms'),
    );
    expect(await new Wire(url).ask('GET', get('/'), 2000)).toMatch(/ECONNREFUSED/);
  });
});

describe('Wire, pipelined (copies of operations without effects)', () => {
  const get = (path: string) => Buffer.from(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  const echo = (r: string) => `HTTP/1.1 200 OK\r\nContent-Length: ${r.split(' ')[1].length}\r\n\r\n${r.split(' ')[1]}`;

  /** A host answering each request in order as it comes, several in one read if they came together; `reply` may close. */
  async function host(
    reply: (request: string, n: number) => string,
  ): Promise<{ url: URL; requests: string[]; connections: () => number; mostAtOnce: () => number; close: () => Promise<void> }> {
    const requests: string[] = [];
    let connections = 0;
    let mostAtOnce = 0;
    const sockets = new Set<net.Socket>();
    const server = net.createServer((socket) => {
      connections++;
      sockets.add(socket);
      let got = '';
      let closed = false;
      socket.on('data', (d) => {
        got += d.toString('latin1');
        const whole = got.split('\r\n\r\n');
        got = whole.pop() ?? '';
        mostAtOnce = Math.max(mostAtOnce, whole.length);
        for (const head of whole) {
          // Every request that came is recorded, those after a close too (unanswered).
          requests.push(head);
          if (closed) continue;
          const answer = reply(head, requests.length);
          socket.write(answer, 'latin1');
          if (/connection: close/i.test(answer)) {
            closed = true;
            socket.end();
          }
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: new URL(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}`),
      requests,
      connections: () => connections,
      mostAtOnce: () => mostAtOnce,
      close: async () => {
        for (const s of sockets) s.destroy();
        await new Promise((resolve) => server.close(resolve));
      },
    };
  }

  test('once a connection has kept an answer alive, requests go on it several at once, and each answer reaches its own exchange', async () => {
    const h = await host(echo);
    try {
      const wire = new Wire(h.url, undefined, 2, 8);
      expect(((await wire.ask('GET', get('/first'), 2000)) as WireAnswer).body.toString()).toBe('/first');
      const paths = Array.from({ length: 40 }, (_, i) => `/p${i}`);
      const answers = await Promise.all(paths.map((p) => wire.ask('GET', get(p), 2000)));
      expect(answers.map((a) => (a as WireAnswer).body.toString())).toEqual(paths);
      expect(h.connections()).toBe(2);
      // Several requests came in one read: pipelined, never more than the depth on one connection.
      expect(h.mostAtOnce()).toBeGreaterThan(1);
      expect(h.mostAtOnce()).toBeLessThanOrEqual(8);
      expect(h.requests).toHaveLength(41);
    } finally {
      await h.close();
    }
  });

  test('a host that closes a connection with requests pipelined on it: those it did not answer are sent again on another, once, and all are answered', async () => {
    // The answer to /p4 closes its connection, with the requests after it pipelined on it unanswered (once: those sent again are answered).
    let closedOnce = false;
    const h = await host((r) => {
      if (closedOnce || r.split(' ')[1] !== '/p4') return echo(r);
      closedOnce = true;
      return `HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 3\r\n\r\n/p4`;
    });
    try {
      const wire = new Wire(h.url, undefined, 1, 8);
      await wire.ask('GET', get('/first'), 2000);
      const paths = Array.from({ length: 30 }, (_, i) => `/p${i}`);
      const answers = await Promise.all(paths.map((p) => wire.ask('GET', get(p), 2000)));
      expect(answers.map((a) => (typeof a === 'string' ? a : a.body.toString()))).toEqual(paths);
      // Those pipelined behind /p4 came twice (the first time unanswered), the rest once.
      const sent = new Map<string, number>();
      for (const r of h.requests) sent.set(r.split(' ')[1], (sent.get(r.split(' ')[1]) ?? 0) + 1);
      expect(Math.max(...sent.values())).toBe(2);
      expect(h.mostAtOnce()).toBeGreaterThan(1);
    } finally {
      await h.close();
    }
  });

  test('without pipelining (depth 1: an operation with effects is copied) one request at a time per connection, and one lost is never sent again', async () => {
    // The third answer is cut short by the end of its connection.
    const h = await host((r, n) => (n === 3 ? 'HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 100\r\n\r\ncut short' : echo(r)));
    try {
      const wire = new Wire(h.url, undefined, 1, 1);
      const paths = ['/a', '/b', '/c', '/d'];
      const answers = await Promise.all(paths.map((p) => wire.ask('GET', get(p), 2000)));
      expect(answers.map((a) => (typeof a === 'string' ? 'failed' : a.body.toString()))).toEqual(['/a', '/b', 'failed', '/d']);
      expect(h.mostAtOnce()).toBe(1);
      expect(h.requests).toHaveLength(4);
    } finally {
      await h.close();
    }
  });

  test('a host that answers only the first of requests pipelined together: the one stuck times out, the others are sent again, and nothing is pipelined after', async () => {
    // As a front that reads one request per read and drops the rest: only the first of each read is answered.
    const sockets = new Set<net.Socket>();
    const server = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('data', (d) => socket.write(echo(d.toString('latin1').split('\r\n\r\n')[0]), 'latin1'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const wire = new Wire(new URL(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}`), undefined, 1, 8);
      await wire.ask('GET', get('/first'), 2000);
      // /b's time-out comes first (in the copier all have the same; those behind a stuck one time out with it).
      const paths = ['/a', '/b', '/c', '/d'];
      const answers = await Promise.all(paths.map((p) => wire.ask('GET', get(p), p === '/b' ? 500 : 3000)));
      const got = answers.map((a) => (typeof a === 'string' ? a : a.body.toString()));
      // /a went first on the proven connection and was answered; /b, next in line, was dropped by the
      // host and timed out; /c and /d, behind it, were sent again one at a time and answered.
      expect(got).toEqual(['/a', 'no answer within 500 ms', '/c', '/d']);
      // From now on one at a time: every request is answered.
      const later = await Promise.all(['/e', '/f', '/g'].map((p) => wire.ask('GET', get(p), 2000)));
      expect(later.map((a) => (a as WireAnswer).body.toString())).toEqual(['/e', '/f', '/g']);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test('bytes nothing was asked for end the connection: the next request goes on a new one', async () => {
    const h = await host((r) => `${echo(r)}HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n`);
    try {
      const wire = new Wire(h.url, undefined, 4, 8);
      for (const p of ['/a', '/b']) expect(((await wire.ask('GET', get(p), 2000)) as WireAnswer).body.toString()).toBe(p);
      expect(h.connections()).toBe(2);
    } finally {
      await h.close();
    }
  });
});
