import zlib from 'zlib';
import type { CopyJob } from '../src/shadow/frames';
import { FrameReader, frameSize, FrameWriter } from '../src/shadow/frames';

/** The copies' wire between the service and its copier (src/shadow/frames.ts): what goes in comes out. */

const arabic = 'مدرسة النور — الصف الأول';
const jobs: CopyJob[] = [
  {
    requestId: 'b0c1d2e3-0000-4000-8000-0123456789ab',
    method: 'GET',
    url: '/PushNotificationMobile.asmx/GetTokenDevice?id=dev-42',
    headers: ['Host', 'school.example', 'User-Agent', 'ksoap2'],
    body: null,
    primary: { status: 200, headers: { 'content-type': 'text/xml; charset=utf-8', 'content-length': '120', 'cache-control': undefined }, body: `<string>${arabic}</string>` },
    labels: { endpoint: 'PushNotificationMobile', operation: 'GetTokenDevice', binding: 'httpget' },
  },
  {
    requestId: 'shadow-2',
    method: 'POST',
    url: '/NotificationNotes.asmx',
    headers: ['Content-Type', 'text/xml; charset=utf-8', 'SOAPAction', '"http://tempuri.org/GetStudentSchool"'],
    body: Buffer.from(`<soap:Envelope><soap:Body><x>${arabic}</x></soap:Body></soap:Envelope>`),
    // Longer than the writer's first buffer: it grows.
    primary: { status: 500, headers: { 'content-type': 'text/xml; charset=utf-8' }, body: zlib.gzipSync(Buffer.from(`<r>${'<s>طالب</s>'.repeat(20000)}</r>`)), encoding: 'gzip' },
    labels: {},
  },
  { requestId: '', method: 'HEAD', url: '/', headers: [], body: Buffer.alloc(0), primary: { status: 404, headers: {}, body: '' }, labels: { endpoint: 'X' } },
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
