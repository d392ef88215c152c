import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { requestBytes } from '../scripts/legacy/ask';
import { buildCorpus } from '../scripts/legacy/corpus';
import type { Case } from '../scripts/legacy/corpus-kit';
import { studentInfoRouter, type StudentInfoRouter } from '../src/process/mount';
import { createServer } from '../src/transport/server';
import { createTestApp, type TestApp } from './helpers/app';

/**
 * Byte for byte: every request of the legacy comparison corpus (1,136: each operation on each binding,
 * routing, lenient parsing, faults, encodings, methods, service pages, HTTP/1.0) put to `npm start`'s
 * listener with BASE_PATH=/StudentService and to an Express app with the service mounted at
 * /StudentService. Each answer, status line, headers in order and body, must be the same bytes; only
 * the Date header (the clock's) is left out. Each side has its own store with the same data, so
 * AuthCode's limits and outbox see the same history on both.
 */

const MOUNT = '/StudentService';
const env = { LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent' };

let plain: TestApp;
let mounted: TestApp;
let router: StudentInfoRouter;
const servers: http.Server[] = [];

async function listen(server: http.Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

let npmStart: string;
let express5: string;
beforeAll(async () => {
  plain = await createTestApp({ BASE_PATH: MOUNT });
  npmStart = await listen(createServer(plain.config.limits, plain.app));
  mounted = await createTestApp();
  router = studentInfoRouter({ env, store: mounted.store });
  const host = express();
  host.use(MOUNT, router);
  express5 = await listen(http.createServer(host));
  await router.ready;
}, 60000);
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  await router.close();
  await Promise.all([plain.close(), mounted.close()]);
});

/** Everything the server sent until it closed the connection (each case asks it to). */
function raw(base: string, c: Case): Promise<string> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    socket.setTimeout(15000, () => socket.destroy(new Error(`no answer to ${c.name}`)));
    socket.on('connect', () => socket.write(requestBytes(base, c, false)));
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () =>
      resolve(
        Buffer.concat(chunks)
          .toString('latin1')
          .replace(/\r\nDate: [^\r]*/, ''),
      ),
    );
  });
}

const corpus = buildCorpus();
// One Host for both (the WSDL addresses hold it), and a request id of our choosing, echoed, so that header is compared too.
const withId = (c: Case, i: number): Case => ({
  ...c,
  headers: { Host: 'legacy.example:8080', ...c.headers, 'X-Request-Id': `case-${i}` },
});

test('every answer is the same bytes through the mount as from npm start', async () => {
  expect(corpus.length).toBe(1136);
  const differ: string[] = [];
  for (const [i, c] of corpus.entries()) {
    const ours = await raw(`${npmStart}${MOUNT}`, withId(c, i));
    const viaExpress = await raw(`${express5}${MOUNT}`, withId(c, i));
    expect(ours).toMatch(/^HTTP\/1\.[01] \d{3} /);
    if (viaExpress !== ours) differ.push(`${c.name}\n--- npm start\n${ours.slice(0, 600)}\n--- mount\n${viaExpress.slice(0, 600)}`);
  }
  expect(differ).toEqual([]);
}, 120000);

test('the mount path as the client spelled it is kept, as under BASE_PATH', async () => {
  const pages = corpus.filter((c) => c.name.startsWith('pages/') || c.kind === 'error');
  expect(pages.length).toBeGreaterThan(40);
  for (const [i, c] of pages.entries()) {
    const spelled = withId(c, i);
    expect([c.name, await raw(`${express5}/studentSERVICE`, spelled)]).toEqual([c.name, await raw(`${npmStart}/studentSERVICE`, spelled)]);
  }
}, 60000);
