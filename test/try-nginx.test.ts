import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describeNginx, NGINX } from './helpers/nginx';
import { BUILD_DIR, freePort, PROJECT_ROOT, request, type Service, startService, TOKEN_PATH } from './helpers/service';

/**
 * Issue 40, point 8: `npm run try-nginx` runs each recipe of deploy/nginx/ as shipped, on ports of
 * the operator's choosing, in front of running services, until stopped: the command as built, with
 * Debian's nginx. Each recipe answers through it (the WSDL naming nginx's address, the round robin
 * reaching both instances), a stop ends nginx gracefully and removes the trial's folder, and
 * `--check`, a port already taken and a wrong command line each end with one line.
 */

const SCRIPT = path.join(BUILD_DIR, 'scripts', 'try-nginx.js');
const SCRIPTS: Record<string, string> = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')).scripts;

function tryNginx(...args: string[]) {
  return spawnSync(process.execPath, [SCRIPT, ...args], { encoding: 'utf8', timeout: 60_000 });
}

/** The command running: resolves with its "runs" line once nginx listens. */
async function running(args: string[]): Promise<{ child: ChildProcess; line: string; out: () => string; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, [SCRIPT, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const line = await new Promise<string>((resolve, reject) => {
    const check = () => {
      const m = /^nginx \(pid \d+\) runs .*$/m.exec(out);
      if (m !== null) return resolve(m[0]);
      if (child.exitCode !== null) return reject(new Error(`try-nginx ended first:\n${out}`));
      setTimeout(check, 50);
    };
    check();
  });
  return { child, line, out: () => out, exited };
}

const gone = (pid: number) => {
  try {
    process.kill(pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
};

test('it is an npm script that runs the build, documented with its options', () => {
  expect(SCRIPTS['try-nginx']).toBe('node -r ./scripts/check-node.js dist/scripts/try-nginx.js');
  const help = tryNginx('--help');
  expect([help.status, help.stdout]).toEqual([0, expect.stringMatching(/^usage: npm run try-nginx -- \[--recipe NAME\]/)]);
  const doc = fs.readFileSync(path.join(PROJECT_ROOT, 'docs', 'operations-commands.md'), 'utf8');
  for (const option of ['--recipe', '--port', '--host', '--upstream', '--dir', '--nginx', '--check']) {
    expect([option, help.stdout.includes(`  ${option} `)]).toEqual([option, true]);
    expect([option, doc.includes(option)]).toEqual([option, true]);
  }
});

test('a wrong command line: one line and the usage, exit 2, nothing started', () => {
  for (const [args, first] of [
    [['--recipe', 'site'], 'error: --recipe must be one of round-robin, student-info, student-info-vdir, got "site"'],
    [['--port', '80800'], 'error: --port must be a port from 1 to 65535 and --host an address, got "127.0.0.1:80800"'],
    [['--upstream', 'localhost'], 'error: --upstream must be PORT or HOST:PORT, got "localhost"'],
    [['--prot', '8081'], 'error: unknown option --prot'],
  ] as const) {
    const r = tryNginx(...args, '--nginx', '/bin/false');
    expect([r.status, r.stderr.split('\n')[0], r.stderr.split('\n')[1]]).toEqual([
      2,
      first,
      expect.stringMatching(/^usage: npm run try-nginx/),
    ]);
  }
});

describeNginx('with Debian nginx', () => {
  test('--check: each recipe as shipped is valid nginx, on the ports given', async () => {
    for (const recipe of ['student-info', 'student-info-vdir', 'round-robin']) {
      const port = await freePort();
      const r = tryNginx('--recipe', recipe, '--port', String(port), '--upstream', '8080', '--nginx', NGINX!, '--check');
      expect([recipe, r.status, r.stdout]).toEqual([
        recipe,
        0,
        `nginx -t: deploy/nginx/${recipe}.conf${recipe === 'round-robin' ? '' : ' (inside an http block)'} is valid, listening on 127.0.0.1:${port} in front of 127.0.0.1:8080\n`,
      ]);
    }
  });

  describe.each([
    ['student-info', '', 1],
    ['student-info-vdir', '/StudentService', 1],
    ['round-robin', '', 2],
  ])('--recipe %s', (recipe, basePath, instances) => {
    const services: Service[] = [];
    afterAll(() => {
      for (const s of services) s.kill();
    });

    test('answers through nginx on the port given, in front of the services given, and a stop ends nginx and removes its folder', async () => {
      for (let i = 0; i < instances; i += 1)
        services.push(await startService({ env: { TRUST_PROXY: 'true', BASE_PATH: basePath, ADMIN_PORT: '0' } }));
      const port = await freePort();
      const t = await running([
        '--recipe',
        recipe,
        '--port',
        String(port),
        ...services.flatMap((s) => ['--upstream', String(s.port)]),
        '--nginx',
        NGINX!,
      ]);
      try {
        const upstreams = services.map((s) => `127.0.0.1:${s.port}`).join(', ');
        expect(t.line).toMatch(
          new RegExp(
            `^nginx \\(pid \\d+\\) runs deploy/nginx/${recipe}\\.conf.*: http://127\\.0\\.0\\.1:${port}/ in front of ${upstreams}; its files and logs in (\\S+) \\(removed at the end\\); Ctrl-C stops it$`,
          ),
        );
        const wsdl = await request(port, `${basePath}/PushNotificationMobile.asmx?wsdl`);
        expect([wsdl.status, wsdl.body]).toEqual([
          200,
          expect.stringContaining(`location="http://127.0.0.1:${port}${basePath}/PushNotificationMobile.asmx"`),
        ]);
        const seen = new Set<string>();
        for (let i = 0; i < 4; i += 1) {
          const token = await request(port, basePath + TOKEN_PATH);
          expect([token.status, token.body]).toEqual([200, expect.stringContaining('fcm:APA91bH-token-1001')]);
          seen.add(String(token.headers['x-upstream']));
        }
        // round-robin.conf names the instance that answered: both did.
        if (recipe === 'round-robin') expect(seen.size).toBe(2);
      } finally {
        t.child.kill('SIGTERM');
      }
      expect(await t.exited).toBe(0);
      const pid = Number(/pid (\d+)/.exec(t.line)![1]);
      const dir = /its files and logs in (\S+) /.exec(t.line)![1]!;
      expect(t.out()).toMatch(/nginx stopped\n$/);
      expect([gone(pid), fs.existsSync(dir)]).toEqual([true, false]);
    }, 60_000);
  });

  test('a port already taken: one line, exit 1, no nginx left', async () => {
    const s = await startService({ env: { ADMIN_PORT: '0' } });
    try {
      const r = tryNginx('--port', String(s.port), '--nginx', NGINX!);
      expect([r.status, r.stderr]).toEqual([1, `something already listens on 127.0.0.1:${s.port}: choose another --port\n`]);
    } finally {
      s.kill();
    }
  });
});
