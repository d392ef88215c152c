import { createServer, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { answerEnd, createCeilingServer, exchangeRaw, parseAnswer, rawRequest, requestKey } from '../scripts/bench/ceiling';
import { createStandIn } from '../scripts/bench/stand-in';
import { WORKLOADS } from '../scripts/bench/workloads';
import { createTestApp, type TestApp } from './helpers/app';

/** The benchmark's ceiling answers a request with the very bytes the service gave for it. */

let t: TestApp;
const servers: Array<Server | net.Server> = [];
const listen = async (s: Server | net.Server): Promise<number> => {
  servers.push(s);
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return (s.address() as AddressInfo).port;
};

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  for (const s of servers) await new Promise((r) => s.close(r));
  await t.close();
});

/** A benchmark request for the fixture data set: a device and a school it has. */
function fixtureRequest(id: string) {
  const w = WORKLOADS.find((x) => x.id === id)!;
  return {
    ...w.request,
    path: w.request.path.replace('dev-bench-42', 'dev-1001'),
    body: w.request.body?.replace('dev-bench-42', 'dev-1001'),
  };
}

test.each(['token-soap11', 'token-get', 'school10-soap11'])('%s: the ceiling replays the service byte for byte', async (id) => {
  const request = fixtureRequest(id);
  const service = await listen(createServer(t.app));
  const fromService = await exchangeRaw(service, rawRequest(service, request));
  const answer = parseAnswer(requestKey(request.method, request.path, request.body ?? ''), fromService);
  expect(answer.status).toBe(200);

  const ceiling = await listen(createCeilingServer([answer]));
  const fromCeiling = await exchangeRaw(ceiling, rawRequest(ceiling, request));
  expect(fromCeiling.toString('latin1')).toBe(fromService.toString('latin1'));
});

/** The shadow comparison's stand-in legacy host answers a copy with the very bytes the service gave, however the copy arrives. */
test.each(['token-soap11', 'token-get'])(
  '%s: the stand-in replays the service byte for byte, a request split or two at once',
  async (id) => {
    const request = fixtureRequest(id);
    const service = await listen(createServer(t.app));
    const fromService = (await exchangeRaw(service, rawRequest(service, request))).toString('latin1');
    const standIn = await listen(
      createStandIn([parseAnswer(requestKey(request.method, request.path, request.body ?? ''), Buffer.from(fromService, 'latin1'))]),
    );
    const bytes = rawRequest(standIn, request);

    const socket = net.connect(standIn, '127.0.0.1');
    let got = '';
    socket.on('data', (d: Buffer) => (got += d.toString('latin1')));
    // Until that much has come, or a second has passed (then the comparison below says what is missing).
    const until = async (length: number) => {
      for (const deadline = Date.now() + 1000; got.length < length && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 5));
    };
    // One request in two pieces, then two in one write: three answers, in order, each the service's.
    socket.write(bytes.subarray(0, 10));
    await new Promise((r) => setTimeout(r, 20));
    expect(got).toBe('');
    socket.write(bytes.subarray(10));
    await until(fromService.length);
    socket.write(Buffer.concat([bytes, bytes]));
    await until(3 * fromService.length);
    socket.destroy();
    expect(got).toBe(fromService.repeat(3));
  },
);

/** The paced load and the stand-in find where an answer ends, by its Content-Length or its chunks. */
test('an answer is framed by its Content-Length, or by its chunks to the last', () => {
  const sized = Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcHTTP/1.1');
  expect(answerEnd(sized)?.end).toBe(sized.length - 'HTTP/1.1'.length);
  expect(answerEnd(sized.subarray(0, 40))).toBeNull();
  const chunked = Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab\r\nc\r\n2;x=1\r\nde\r\n0\r\n\r\n');
  const next = Buffer.concat([chunked, Buffer.from('HTTP/1.1 200 OK\r\n')]);
  expect(answerEnd(next)).toEqual({ end: chunked.length, head: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked' });
  // Every cut before its last byte is an answer not all come.
  for (let cut = 0; cut < chunked.length; cut++) expect(answerEnd(chunked.subarray(0, cut))).toBeNull();
});
