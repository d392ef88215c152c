import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { siteWrapper, trialFiles } from '../../scripts/nginx-recipes';
import { PROJECT_ROOT, type Reply, request } from './service';

/**
 * Debian's nginx, run by the deploy tests on ports of their own. jest.config.js finds it (TEST_NGINX)
 * and says before the run when these tests are skipped; REQUIRE_NGINX=1 makes its absence a failure.
 */
export const NGINX = process.env.TEST_NGINX || undefined;
const required = process.env.REQUIRE_NGINX === '1';
export const describeNginx = NGINX !== undefined || required ? describe : describe.skip;

export const recipe = (file: string): string => fs.readFileSync(path.join(PROJECT_ROOT, 'deploy', 'nginx', file), 'utf8');

export interface Nginx {
  dir: string;
  /** What every access log in its directory holds (every file ending .log but the error log). */
  accessLogs(): string;
  stop(): Promise<void>;
}

/**
 * Runs nginx on `mainConf` (a whole nginx.conf, given the directory it runs in) once `nginx -t` passes,
 * and resolves once `port` answers. Run as root, the worker stays root so it can use the directory.
 */
export async function runNginx(mainConf: (dir: string) => string, port: number): Promise<Nginx> {
  expect(NGINX).toBeDefined();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'student-info-nginx-'));
  const conf = path.join(dir, 'nginx.conf');
  fs.writeFileSync(conf, (process.getuid?.() === 0 ? 'user root;\n' : '') + mainConf(dir));
  const check = spawnSync(NGINX!, ['-t', '-p', dir, '-e', `${dir}/error.log`, '-c', conf], { encoding: 'utf8' });
  expect(check.stderr).toContain('test is successful');
  const proc: ChildProcess = spawn(NGINX!, ['-p', dir, '-e', `${dir}/error.log`, '-c', conf], { stdio: 'ignore' });
  for (let i = 0; i < 100; i += 1) {
    if (
      await request(port, '/').then(
        () => true,
        () => false,
      )
    )
      break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    dir,
    accessLogs: () =>
      fs
        .readdirSync(dir)
        .filter((f) => f.endsWith('.log') && f !== 'error.log')
        .map((f) => fs.readFileSync(path.join(dir, f), 'utf8'))
        .join(''),
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGQUIT');
        await new Promise((r) => proc.once('exit', r));
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A recipe of deploy/nginx/ as `npm run try-nginx` runs it (scripts/nginx-recipes.ts: a site inside
 * the http block Debian's nginx.conf would be, with Debian's access log for the site to replace; a
 * whole nginx.conf as it is), listening on `listen`, in front of `upstreams`, its logs in the test's
 * directory.
 */
export const recipeConf = (name: string, listen: string, upstreams: readonly string[]) => (dir: string) => {
  const files = trialFiles(name, listen, upstreams, dir, `${dir}/error.log`);
  for (const [file, text] of Object.entries(files)) if (file !== 'nginx.conf') fs.writeFileSync(path.join(dir, file), text);
  return files['nginx.conf']!;
};

/** A site file changed by the test beyond its addresses (a second server line, a header), inside the same main configuration. */
export const aroundSite = (site: string) => (dir: string) => {
  fs.writeFileSync(path.join(dir, 'site.conf'), site.replaceAll('/var/log/nginx/', `${dir}/`));
  return siteWrapper(dir, `${dir}/error.log`);
};

/** An AuthCode request over HTTP POST from the client source address `from` (a loopback address of its own). */
export function authCodeFrom(from: string, port: number, pathPrefix: string, code: string, phone: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const body = new URLSearchParams({ code, phone }).toString();
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        localAddress: from,
        path: `${pathPrefix}/AuthCodeSending.asmx/AuthCode`,
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': Buffer.byteLength(body) },
        agent: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
