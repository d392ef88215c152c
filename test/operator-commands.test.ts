/**
 * Issue 21, rule 8: the operator commands run from the built dist/ of a production install (dev
 * dependencies pruned) and never delete or rebuild it; a rebuild never pulls dist/ from under a
 * running service; the development tools build elsewhere. Everything runs in a copy of the project
 * in a temporary directory, with a real copy of node_modules (never hard links: npm rewrites files
 * in place, which would reach the shared install), pruned by npm itself.
 */
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BUILD_DIR, request, startService, TOKEN_PATH } from './helpers/service';

const ROOT = path.join(__dirname, '..');
const { writeBuildInfo } = require('../scripts/build.js') as { writeBuildInfo: (dir: string, root: string) => void };
const SCRIPTS: Record<string, string> = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts;
/** What a build and the commands need; the copy holds nothing else of the project. */
const COPIED = [
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'src',
  'scripts',
  'test/clients',
  'wsdl',
  'demo',
];
const FIXTURES = path.join(ROOT, 'test', 'fixtures');

let copy: string;
let dist: string;

/** Every file under dir with a hash of its content: equal listings mean nothing was touched. */
function listing(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rel of fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort()) {
    const file = path.join(dir, rel);
    if (fs.statSync(file).isFile()) out[rel] = crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  }
  return out;
}

/** A clean environment: nothing of the npm running jest, no DATABASE_URL; a registry that cannot answer. */
function env(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? os.homedir(),
    SQLITE_PATH: path.join(copy, 'data', 'school.db'),
    npm_config_registry: 'http://127.0.0.1:9/',
    npm_config_fetch_retries: '0',
    npm_config_update_notifier: 'false',
    ...extra,
  };
}

function run(command: string, args: string[], extra: Record<string, string> = {}) {
  const r = spawnSync(command, args, { cwd: copy, env: env(extra), encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, all: `${r.stdout}\n${r.stderr}${r.error ? `\n${r.error.message}` : ''}` };
}

const npm = (...args: string[]) => run('npm', args);
const staged = () => fs.readdirSync(copy).filter((n) => n.includes('.next-'));

beforeAll(() => {
  copy = fs.mkdtempSync(path.join(os.tmpdir(), 'student-info-install-'));
  dist = path.join(copy, 'dist');
  for (const name of COPIED) fs.cpSync(path.join(ROOT, name), path.join(copy, name), { recursive: true });
  const copied = spawnSync('cp', ['-a', fs.realpathSync(path.join(ROOT, 'node_modules')), path.join(copy, 'node_modules')]);
  expect(copied.status).toBe(0);
  // dist/ as `npm run build` makes it in the copy: the tests' own build of the same sources (the global
  // setup's, by scripts/build.js), its build-info written by the build's own code for the copy, which
  // names no commit, being no git checkout. The first test builds again over it and finds the same
  // files, byte for byte (a compile saved).
  fs.cpSync(BUILD_DIR, dist, { recursive: true });
  writeBuildInfo(dist, copy);
}, 180_000);

afterAll(() => {
  if (copy !== undefined) fs.rmSync(copy, { recursive: true, force: true });
});

describe('package.json scripts', () => {
  const operator = Object.keys(SCRIPTS).filter((name) => /^node\b.*\bdist\//.test(SCRIPTS[name]!));

  it('operator commands run dist/ as built, without building or deleting anything, and have no pre/post hooks', () => {
    expect(operator).toEqual(expect.arrayContaining(['start', 'import', 'outbox', 'shadow-report', 'audit']));
    for (const name of operator) {
      expect([name, SCRIPTS[name]]).not.toEqual([name, expect.stringMatching(/build\.js|\btsc\b|\brm\b|rmSync|&&|;/)]);
      // npm runs `preX` and `postX` on its own: a rebuild hidden there would be the old fault again.
      expect(SCRIPTS[`pre${name}`]).toBeUndefined();
      expect(SCRIPTS[`post${name}`]).toBeUndefined();
    }
    expect(SCRIPTS.prebuild).toBeUndefined();
  });

  it('only build and prepare write dist/; every other build goes to .dev-build/ and tsc only type-checks', () => {
    for (const [name, command] of Object.entries(SCRIPTS)) {
      if (name === 'build' || name === 'prepare') expect(command).toBe('node scripts/build.js');
      else if (command.includes('scripts/build.js'))
        expect([name, command]).toEqual([name, expect.stringMatching(/^node scripts\/build\.js --out \.dev-build && node \.dev-build\//)]);
      else if (/\btsc\b/.test(command)) expect([name, command]).toEqual([name, expect.stringContaining('--noEmit')]);
      if (command.includes('.dev-build/')) expect(command).toMatch(/^node scripts\/build\.js --out \.dev-build && /);
      expect([name, command]).not.toEqual([name, expect.stringMatching(/rmSync|rm -|rimraf/)]);
    }
  });

  it('docs/operations-commands.md names every script', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs', 'operations-commands.md'), 'utf8');
    // npm's own lifecycle names: `npm start`, `npm test`, and preinstall and prepare, which npm ci runs.
    const named = (name: string) =>
      name === 'prepare' || name === 'preinstall' ? `\`${name}\`` : ['start', 'test'].includes(name) ? `npm ${name}` : `npm run ${name}`;
    const missing = Object.keys(SCRIPTS).filter((name) => !doc.includes(named(name)));
    expect(missing).toEqual([]);
  });
});

describe('a build while the service runs from dist/', () => {
  it('never leaves a file missing, sweeps what the new build no longer makes, and a failed build changes nothing', async () => {
    const service = await startService({ command: [process.execPath, path.join(dist, 'src', 'main.js')], cwd: copy });
    try {
      const before = listing(dist);
      const files = Object.keys(before).map((rel) => path.join(dist, rel));
      fs.writeFileSync(path.join(dist, 'src', 'left-over.js'), '');
      fs.mkdirSync(path.join(dist, 'old'));
      fs.writeFileSync(path.join(dist, 'old', 'gone.js'), '');

      const build = spawn(process.execPath, ['scripts/build.js'], { cwd: copy, env: env(), stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      build.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const done = new Promise<number | null>((resolve) => build.once('exit', resolve));
      let finished = false;
      void done.then(() => (finished = true));
      let passes = 0;
      const missing = new Set<string>();
      const answers: number[] = [];
      while (!finished) {
        for (const file of files) if (!fs.existsSync(file)) missing.add(path.relative(dist, file));
        passes += 1;
        if (passes % 50 === 0) answers.push((await request(service.port, TOKEN_PATH)).status);
        // A pass every millisecond or so, not back to back: a file missing for longer is seen (a build
        // that deleted before writing left files missing for seconds), and the build is not slowed by
        // a watcher taking a whole processor.
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      expect([await done, stderr]).toEqual([0, '']);
      expect([...missing]).toEqual([]);
      expect(passes).toBeGreaterThan(10);
      expect(answers.every((s) => s === 200)).toBe(true);
      // The same sources give the same files, byte for byte: the build is whole, the strays are gone.
      expect(listing(dist)).toEqual(before);
      expect(staged()).toEqual([]);
      expect((await request(service.port, TOKEN_PATH)).status).toBe(200);

      const source = path.join(copy, 'src', 'basics', 'paths.ts');
      const original = fs.readFileSync(source, 'utf8');
      fs.appendFileSync(source, "\nexport const broken: number = 'not a number';\n");
      try {
        const failed = run(process.execPath, ['scripts/build.js']);
        expect(failed.status).not.toBe(0);
        expect(failed.stderr.trim().split('\n').pop()).toBe('build failed: dist/ left as it was');
      } finally {
        fs.writeFileSync(source, original);
      }
      expect(listing(dist)).toEqual(before);
      expect(staged()).toEqual([]);
    } finally {
      service.proc.kill('SIGTERM');
      await service.exited;
    }
  }, 180_000);
});

describe('development tools', () => {
  it('npm run fuzz builds into .dev-build/ and runs from there, leaving dist/ as it was', () => {
    const before = listing(dist);
    const fuzz = npm('run', '-s', 'fuzz', '--', '--count', '60', '--seed', '7');
    expect(fuzz.all).toMatch(/60 requests in [\s\S]*the service \(pid \d+\) is still the one answering/s);
    expect(fuzz.status).toBe(0);
    expect(fs.existsSync(path.join(copy, '.dev-build', 'src', 'main.js'))).toBe(true);
    expect(listing(dist)).toEqual(before);
    expect(staged()).toEqual([]);
  }, 180_000);
});

describe('a production install: npm prune --omit=dev', () => {
  let before: Record<string, string>;

  beforeAll(() => {
    const pruned = npm('prune', '--omit=dev', '--offline', '--no-audit', '--no-fund');
    expect(pruned.all).not.toMatch(/ERR!/);
    expect(pruned.status).toBe(0);
    before = listing(dist);
  }, 120_000);

  it('has no build tools: a rebuild is refused with one line and dist/ stays', () => {
    expect(fs.existsSync(path.join(copy, 'node_modules', 'typescript'))).toBe(false);
    expect(fs.existsSync(path.join(copy, 'node_modules', 'jest'))).toBe(false);
    const build = npm('run', '-s', 'build');
    expect([build.status, build.stderr.trim()]).toEqual([1, 'typescript not installed: run npm ci']);
    // `npm ci --omit=dev` runs prepare: a build already there is kept, not an error.
    const prepare = run(process.execPath, ['scripts/build.js'], { npm_lifecycle_event: 'prepare' });
    expect([prepare.status, prepare.stderr.trim()]).toEqual([0, 'typescript not installed: dist/ kept as it is']);
    expect(listing(dist)).toEqual(before);
  });

  it('every operator command runs there, and dist/ is unchanged afterwards', async () => {
    const ran: Record<string, { status: number | null; all: string }> = {
      'import --demo': npm('run', '-s', 'import', '--', '--demo'),
      'import CSV': npm(
        'run',
        '-s',
        'import',
        '--',
        '--students',
        path.join(FIXTURES, 'data', 'students.csv'),
        '--devices',
        path.join(FIXTURES, 'data', 'devices.csv'),
      ),
      'outbox --list': npm('run', '-s', 'outbox', '--', '--list'),
      'outbox --list --failed': npm('run', '-s', 'outbox', '--', '--list', '--failed'),
      'shadow-report': npm('run', '-s', 'shadow-report', '--', path.join(FIXTURES, 'shadow-differences.jsonl')),
      // The registry is unreachable here: the command runs, and accepts, as told, that it checked nothing.
      audit: npm('run', '-s', 'audit', '--', '--allow-unchecked'),
    };
    for (const [what, r] of Object.entries(ran))
      expect([what, r.status, r.all]).toEqual([what, 0, expect.not.stringMatching(/not found|Cannot find module|typescript/)]);
    expect(ran['import CSV']!.all).toMatch(/students/);
    expect(ran['shadow-report']!.all).toMatch(/^2 requests with differences\n[\s\S]*2 kinds of difference/);
    expect(ran.audit!.all).toMatch(/nothing was checked \(accepted: --allow-unchecked\)/);
    // Not told: a check that checked nothing fails.
    expect(npm('run', '-s', 'audit')).toMatchObject({
      status: 3,
      stderr: expect.stringMatching(/^error: .*; nothing was checked \(--allow-unchecked accepts that\)\n$/),
    });

    // The production start line, as the README and the systemd unit give it, over what was imported.
    const start = SCRIPTS.start!.split(/\s+/).slice(1);
    const service = await startService({
      command: [process.execPath, ...start],
      cwd: copy,
      env: { SQLITE_PATH: env().SQLITE_PATH },
      load: false,
    });
    try {
      const listening = await service.waitFor((l) => l.msg.startsWith('listening on '));
      expect(listening.msg).toMatch(/store SQLite .*school\.db: [1-9]\d* students, [1-9]\d* devices/);
      // Built outside any git checkout (the copy): the version, and no commit to name.
      expect(listening.msg).toContain('; version 1.0.0, commit unknown; ');
      const token = await request(service.port, TOKEN_PATH);
      expect(token.status).toBe(200);
    } finally {
      service.proc.kill('SIGTERM');
      await service.exited;
    }
    expect(listing(dist)).toEqual(before);
    expect(staged()).toEqual([]);
  }, 180_000);
});
