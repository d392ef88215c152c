import zlib from 'node:zlib';
import type { CopyJob } from '../src/shadow/frames';
import { FrameWriter } from '../src/shadow/frame-writer';
import { FrameReader, frameSize } from '../src/shadow/frames';
import { lastingBodies } from '../src/transport/exchange';

/** The copies' wire between the service and its copier (src/shadow/frames.ts): what goes in comes out. */

const arabic = 'مدرسة النور — الصف الأول';
const jobs: CopyJob[] = [
  {
    requestId: 'b0c1d2e3-0000-4000-8000-0123456789ab',
    method: 'GET',
    url: '/PushNotificationMobile.asmx/GetTokenDevice?id=dev-42',
    headers: ['Host', 'school.example', 'User-Agent', 'ksoap2'],
    body: null,
    primary: {
      status: 200,
      headers: { 'content-type': 'text/xml; charset=utf-8', 'content-length': '120', 'cache-control': undefined },
      body: `<string>${arabic}</string>`,
    },
    labels: { endpoint: 'PushNotificationMobile', operation: 'GetTokenDevice', binding: 'httpget' },
  },
  {
    requestId: 'shadow-2',
    method: 'POST',
    url: '/NotificationNotes.asmx',
    headers: ['Content-Type', 'text/xml; charset=utf-8', 'SOAPAction', '"http://tempuri.org/GetStudentSchool"'],
    body: Buffer.from(`<soap:Envelope><soap:Body><x>${arabic}</x></soap:Body></soap:Envelope>`),
    // Longer than the writer's first buffer: it grows.
    primary: {
      status: 500,
      headers: { 'content-type': 'text/xml; charset=utf-8' },
      body: zlib.gzipSync(Buffer.from(`<r>${'<s>طالب</s>'.repeat(20000)}</r>`)),
      encoding: 'gzip',
    },
    labels: {},
  },
  {
    requestId: '',
    method: 'HEAD',
    url: '/',
    headers: [],
    body: Buffer.alloc(0),
    primary: { status: 404, headers: {}, body: '' },
    labels: { endpoint: 'X' },
  },
];

/** A job as it reads back: absent labels and header values stay absent, bytes come back as bytes, an answer's text as the UTF-8 node sent. */
const expected = (j: CopyJob) => ({
  ...j,
  body: j.body === null ? null : Buffer.from(j.body),
  primary: { ...j.primary, body: Buffer.from(j.primary.body), encoding: j.primary.encoding },
  labels: { endpoint: j.labels.endpoint, operation: j.labels.operation, binding: j.labels.binding },
});

function written(list: CopyJob[]): Buffer {
  const w = new FrameWriter(1024);
  for (const j of list) w.job(j);
  return Buffer.from(w.take());
}

test('jobs written in one batch read back whole, field for field', () => {
  expect(new FrameReader().read(written(jobs)).map((f) => f.job)).toEqual(jobs.map(expected));
});

test('frames split anywhere across reads come out once each, in order', () => {
  const bytes = written(jobs);
  for (const size of [1, 3, 7, 1000, 65536]) {
    const reader = new FrameReader();
    const out: CopyJob[] = [];
    for (let at = 0; at < bytes.length; at += size) out.push(...reader.read(bytes.subarray(at, at + size)).map((f) => f.job));
    expect(out).toEqual(jobs.map(expected));
  }
});

test('a buffer given back is written into afresh: later batches are not mixed with earlier ones', () => {
  const w = new FrameWriter(256);
  const reader = new FrameReader();
  for (let round = 0; round < 5; round++) {
    const job = { ...jobs[0], requestId: `round-${round}` };
    w.job(job);
    const frames = w.take();
    expect(reader.read(Buffer.from(frames)).map((f) => f.job)).toEqual([expected(job)]);
    w.release(frames);
  }
  expect(w.empty).toBe(true);
});

test('a batch starts as large as the last one grew, so that large answers are not copied again and again while it grows', () => {
  const w = new FrameWriter(256);
  const big = { ...jobs[0], primary: { ...jobs[0].primary, body: Buffer.alloc(10_000, 0x41) } };
  for (let n = 0; n < 3; n++) w.job(big);
  const first = w.take();
  w.job(big);
  const second = w.take();
  // Grown from 256 bytes, one job would have stopped at 16 KiB; it was written into memory as large as the three took.
  expect(first.buffer.byteLength).toBeGreaterThanOrEqual(30_000);
  expect(second.buffer.byteLength).toBe(first.buffer.byteLength);
  expect(new FrameReader().read(Buffer.from(second)).map((f) => f.job)).toEqual([expected(big)]);
});

test("a frame's size is known before it is written (what the service's budget takes) and is what the copier reads it as", () => {
  const w = new FrameWriter(64);
  const sizes = jobs.map((j) => {
    const before = w.size;
    w.job(j);
    return w.size - before;
  });
  expect(jobs.map(frameSize)).toEqual(sizes);
  expect(new FrameReader().read(Buffer.from(w.take())).map((f) => f.bytes)).toEqual(sizes);
});

describe("lasting bodies (a cached roster's bytes) go to the copier once, then by reference", () => {
  const lasting = (size: number, fill: number) => {
    const body = Buffer.alloc(size, fill);
    lastingBodies.add(body);
    return body;
  };
  const copyOf = (body: Buffer, requestId: string): CopyJob => ({ ...jobs[0], requestId, primary: { ...jobs[0].primary, body } });
  /** Writes each job in a batch of its own, as the service would, and reads it back: each frame's bytes and the body read. */
  function pass(
    w: FrameWriter,
    reader: FrameReader,
    list: CopyJob[],
  ): Array<{ bytes: number; sized: number; body: Buffer; whole: boolean; view: boolean }> {
    return list.map((job) => {
      const sized = w.sizeOf(job);
      w.job(job);
      const frames = Buffer.from(w.take());
      const [frame] = reader.read(frames);
      const body = frame.job.primary.body as Buffer;
      // Whole: the frame carried the body's bytes; view: the body read is a view of the bytes it came in.
      return { bytes: frame.bytes, sized, body, whole: frame.bytes >= frameSize(job), view: body.buffer === frames.buffer };
    });
  }

  test('the second copy of a lasting body carries a reference, and reads back as the same bytes; a body not marked lasting goes whole each time', () => {
    const roster = lasting(78_000, 0x52);
    const plain = Buffer.alloc(78_000, 0x50);
    const [first, second, third] = pass(new FrameWriter(1024, 1_000_000), new FrameReader(1_000_000), [
      copyOf(roster, 'a'),
      copyOf(roster, 'b'),
      copyOf(plain, 'c'),
    ]);
    expect([first.whole, second.whole, third.whole]).toEqual([true, false, true]);
    expect(second.bytes).toBeLessThan(first.bytes - 77_000);
    for (const f of [first, second]) expect(f.body.equals(Buffer.alloc(78_000, 0x52))).toBe(true);
    expect(third.body.equals(plain)).toBe(true);
    // What the copier holds is its own copy: the chunk a body came in is neither kept for it nor able to change it.
    expect([first.view, second.view, third.view]).toEqual([false, false, true]);
    // sizeOf, what the service's budget takes before writing, is what the copier reads the frame as.
    for (const f of [first, second, third]) expect(f.sized).toBe(f.bytes);
  });

  test('both sides forget the least recently used alike once the held bodies pass the limit: a forgotten body goes whole again', () => {
    const [a, b, c] = [lasting(400, 0x41), lasting(400, 0x42), lasting(400, 0x43)];
    const w = new FrameWriter(1024, 1000);
    const reader = new FrameReader(1000);
    // a, b held (800 bytes); a used again; c makes 1,200: b, the least recently used, is forgotten.
    const out = pass(w, reader, [
      copyOf(a, '1'),
      copyOf(b, '2'),
      copyOf(a, '3'),
      copyOf(c, '4'),
      copyOf(a, '5'),
      copyOf(b, '6'),
      copyOf(c, '7'),
    ]);
    expect(out.map((f) => f.whole)).toEqual([true, true, false, true, false, true, true]);
    expect(out.map((f) => f.body[0])).toEqual([0x41, 0x42, 0x41, 0x43, 0x41, 0x42, 0x43]);
    for (const f of out) expect(f.sized).toBe(f.bytes);
  });

  test('a lasting body larger than the limit is never held; after clear() (a new copier) every body goes whole once more', () => {
    const big = lasting(2000, 0x58);
    const small = lasting(100, 0x59);
    const w = new FrameWriter(1024, 1000);
    const out = pass(w, new FrameReader(1000), [copyOf(big, '1'), copyOf(big, '2'), copyOf(small, '3'), copyOf(small, '4')]);
    expect(out.map((f) => f.whole)).toEqual([true, true, true, false]);
    w.clear();
    const [again] = pass(w, new FrameReader(1000), [copyOf(small, '5')]);
    expect(again.whole).toBe(true);
    expect(again.body.equals(small)).toBe(true);
  });
});
