import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { BUILD_DIR, freePort, PROJECT_ROOT } from './helpers/service';

/**
 * Issue 40, point 7: `npm run audit` is a check that can fail. It fails on a high or critical
 * advisory (exit 1), and also when the advisory database could not be asked (exit 3: nothing was
 * checked), unless the caller accepts that explicitly (--allow-unchecked: exit 0, and the run says
 * that nothing was checked). The command as built runs npm audit on this project's lock file
 * against a registry of the test's own: none at all, one without the audit endpoint (as some
 * mirrors, this machine's among them), one with an advisory, one with none.
 */

let cache: string;
beforeAll(() => (cache = fs.mkdtempSync(path.join(os.tmpdir(), 'student-info-audit-cache-'))));
afterAll(() => fs.rmSync(cache, { recursive: true, force: true }));

/** The command as built, against `registry`: its exit code, stdout and stderr lines. */
function audit(registry: string, ...args: string[]): Promise<{ code: number | null; out: string[]; err: string[] }> {
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? os.homedir(),
    npm_config_registry: registry,
    npm_config_cache: cache,
    npm_config_fetch_retries: '0',
    npm_config_update_notifier: 'false',
  };
  const child = spawn(process.execPath, [path.join(BUILD_DIR, 'scripts', 'audit.js'), ...args], {
    cwd: PROJECT_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const lines = (s: string) => s.split('\n').filter((l) => l !== '');
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, out: lines(out), err: lines(err) })));
}

/** A registry answering the bulk advisory endpoint with `advisories` (null: 405, as a mirror without it), and any package's document. */
async function registry(advisories: object | null): Promise<{ url: string; asked: string[]; close(): Promise<void> }> {
  const asked: string[] = [];
  const server = http.createServer((req, res) => {
    const body: Buffer[] = [];
    req.on('data', (d: Buffer) => body.push(d));
    req.on('end', () => {
      res.setHeader('Content-Type', 'application/json');
      if (req.method === 'POST' && req.url === '/-/npm/v1/security/advisories/bulk') {
        const sent = req.headers['content-encoding'] === 'gzip' ? gunzipSync(Buffer.concat(body)) : Buffer.concat(body);
        // The production dependencies as locked, with their versions: express among them.
        asked.push(`POST advisories for express ${(JSON.parse(sent.toString()) as Record<string, string[]>).express?.join(',')}`);
        if (advisories === null) return void res.writeHead(405, { Allow: 'GET,HEAD' }).end();
        return void res.end(JSON.stringify(advisories));
      }
      // npm reads the document of a package with an advisory to see which versions it touches.
      asked.push(`${req.method} ${req.url}`);
      const name = decodeURIComponent((req.url ?? '/').slice(1));
      res.end(JSON.stringify({ name, 'dist-tags': { latest: '5.1.0' }, versions: { '5.1.0': { name, version: '5.1.0' } } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    asked,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const ADVISORY = {
  express: [
    {
      id: 1,
      url: 'https://example.invalid/advisory/1',
      title: 'a test advisory',
      severity: 'high',
      vulnerable_versions: '<=5.1.0',
      cwe: [],
      cvss: { score: 7.5, vectorString: null },
    },
  ],
};

describe('npm run audit, as built', () => {
  test('no registry at all: exit 3, "nothing was checked", and what npm said', async () => {
    const port = await freePort();
    const r = await audit(`http://127.0.0.1:${port}/`);
    expect(r).toEqual({
      code: 3,
      out: [],
      err: [
        `error: the advisory database could not be asked (request to http://127.0.0.1:${port}/-/npm/v1/security/advisories/bulk failed, reason: connect ECONNREFUSED 127.0.0.1:${port}); nothing was checked (--allow-unchecked accepts that)`,
      ],
    });
  }, 60_000);

  test('--allow-unchecked accepts it: exit 0, and the run still says that nothing was checked', async () => {
    const port = await freePort();
    const r = await audit(`http://127.0.0.1:${port}/`, '--allow-unchecked');
    expect(r.code).toBe(0);
    expect(r.err).toEqual([
      expect.stringMatching(
        /^warning: the advisory database could not be asked \(.*ECONNREFUSED.*\); nothing was checked \(accepted: --allow-unchecked\)$/,
      ),
    ]);
  }, 60_000);

  test('a registry without the audit endpoint (405) checked nothing either: exit 3', async () => {
    const reg = await registry(null);
    try {
      const r = await audit(reg.url);
      expect(r.code).toBe(3);
      expect(r.err).toEqual([
        expect.stringMatching(
          /^error: the advisory database could not be asked \(405 Method Not Allowed - POST .*\/-\/npm\/v1\/security\/advisories\/bulk\); nothing was checked/,
        ),
      ]);
    } finally {
      await reg.close();
    }
  }, 60_000);

  test('asked: a high advisory fails it (exit 1), none passes it (exit 0), --allow-unchecked changing neither', async () => {
    for (const [advisories, code, high] of [
      [ADVISORY, 1, 1],
      [{}, 0, 0],
    ] as const) {
      for (const args of [[], ['--allow-unchecked']]) {
        const reg = await registry(advisories);
        try {
          const r = await audit(reg.url, ...args);
          expect([r.code, r.err]).toEqual([code, []]);
          expect(r.out).toEqual([expect.stringMatching(new RegExp(`^npm audit --omit=dev: \\{.*"high":${high},"critical":0,`))]);
          expect(reg.asked[0]).toBe('POST advisories for express 5.1.0');
        } finally {
          await reg.close();
        }
      }
    }
  }, 120_000);

  test('an unknown option: the usage, exit 2, nothing asked', async () => {
    const reg = await registry({});
    try {
      expect(await audit(reg.url, '--allow-uncheked')).toEqual({
        code: 2,
        out: [],
        err: ['error: unknown option --allow-uncheked', 'usage: npm run audit [-- --allow-unchecked]'],
      });
      expect(reg.asked).toEqual([]);
    } finally {
      await reg.close();
    }
  });
});
