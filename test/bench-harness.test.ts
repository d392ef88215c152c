import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCeilingServer, exchangeRaw, parseAnswer, rawRequest, requestKey } from '../scripts/bench/ceiling';
import { WORKLOADS } from '../scripts/bench/workloads';
import { createTestApp, type TestApp } from './helpers/app';

/** The benchmark's ceiling answers a request with the very bytes the service gave for it. */

let t: TestApp;
const servers: Server[] = [];
const listen = async (s: Server): Promise<number> => {
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

test.each(['token-soap11', 'token-get', 'school10-soap11'])('%s: the ceiling replays the service byte for byte', async (id) => {
  const w = WORKLOADS.find((x) => x.id === id)!;
  // The fixture data set: a device and a school it has.
  const request = { ...w.request, path: w.request.path.replace('dev-bench-42', 'dev-1001'), body: w.request.body?.replace('dev-bench-42', 'dev-1001') };
  const service = await listen(createServer(t.app));
  const fromService = await exchangeRaw(service, rawRequest(service, request));
  const answer = parseAnswer(requestKey(request.method, request.path, request.body ?? ''), fromService);
  expect(answer.status).toBe(200);

  const ceiling = await listen(createCeilingServer([answer]));
  const fromCeiling = await exchangeRaw(ceiling, rawRequest(ceiling, request));
  expect(fromCeiling.toString('latin1')).toBe(fromService.toString('latin1'));
});
