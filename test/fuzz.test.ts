import type { AddressInfo } from 'node:net';
import type http from 'node:http';
import { fuzz } from '../scripts/fuzz/run';
import { exchange } from '../scripts/fuzz/wire';
import { createServer } from '../src/transport/server';
import { createTestApp, type TestApp } from './helpers/app';

/**
 * Mutated requests of every binding, sent as raw bytes to the real listener: every one must get a
 * complete answer with nothing internal in it, and the same process must answer valid requests after.
 * Fixed seed and count, so a failure reproduces; `npm run fuzz -- --count N` runs it longer.
 */

let t: TestApp;
let server: http.Server;
let port: number;

beforeAll(async () => {
  // A short request time-out, so that requests whose body never comes are answered quickly.
  t = await createTestApp({ REQUEST_TIMEOUT_MS: '400' });
  server = createServer(t.config.limits, t.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await t.close();
});

test('2,000 mutated requests: each answered completely, nothing internal, the service still serving', async () => {
  // The deadline tells a held connection from a slow machine: the service's own request time-out is
  // 400 ms here, so an answer later than this means nothing would ever have come.
  const report = await fuzz({
    host: '127.0.0.1',
    port,
    count: 2000,
    seed: 20261121,
    concurrency: 24,
    deadlineMs: 15000,
    includeEffects: true,
  });
  expect(report.sent).toBe(2000);
  expect(report.failures).toEqual([]);
  expect(report.afterwards).toEqual([]);
  // The mutations reach every kind of answer, not only the front door's refusals.
  expect(Object.keys(report.statuses)).toEqual(expect.arrayContaining(['200', '400', '404', '500']));

  const soap =
    '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>' +
    '<GetTokenDevice xmlns="http://tempuri.org/"><id>dev-1001</id></GetTokenDevice></soap:Body></soap:Envelope>';
  const request = Buffer.from(
    'POST /PushNotificationMobile.asmx HTTP/1.1\r\nHost: x\r\nContent-Type: text/xml; charset=utf-8\r\n' +
      `SOAPAction: "http://tempuri.org/GetTokenDevice"\r\nContent-Length: ${soap.length}\r\n\r\n${soap}`,
  );
  const after = await exchange('127.0.0.1', port, request, 'POST', 2000);
  expect(after.kind).toBe('response');
  if (after.kind === 'response')
    expect(after.response.body.toString()).toContain('<GetTokenDeviceResult>fcm:APA91bH-token-1001</GetTokenDeviceResult>');
}, 60000);
