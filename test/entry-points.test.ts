/**
 * Issue 40, point 1: every entry point (the service as systemd runs it, the cluster's workers, the
 * shadow copier, every command of dist/scripts/) refuses an unsupported Node in scripts/check-node.js's
 * one line, exit 1, before any other module is loaded: on Node 20, better-sqlite3 was a segmentation
 * fault with no output. Point 6, in part: with no build, `npm start` says to build, in one line.
 *
 * The real old Node is the one jest.config.js finds (OLD_NODE, which CI installs, or the machine's
 * /usr/bin/node when it is an unsupported line); REQUIRE_OLD_NODE=1 makes its absence a failure. The
 * order (the check before anything else) is proved on this Node too, with the version the check reads
 * set to 20.20.2 and every module loaded by the exit listed.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ENTRY_POINTS, entrySources } from './helpers/entry-points';
import { BUILD_DIR, PROJECT_ROOT } from './helpers/paths';

const { refusal, missingBuild } = require('../scripts/check-node.js') as {
  refusal(v: string): string | null;
  missingBuild(main: string | undefined): string | null;
};
const OLD_NODE = process.env.TEST_OLD_NODE || undefined;
const describeOldNode = OLD_NODE !== undefined || process.env.REQUIRE_OLD_NODE === '1' ? describe : describe.skip;

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'student-info-entry-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** What a run left in its working directory, which holds its store and its HOME: nothing, each time. */
const leftIn = (d: string) => fs.readdirSync(d, { recursive: true, encoding: 'utf8' });

function run(node: string, args: string[], env: Record<string, string> = {}) {
  const work = fs.mkdtempSync(path.join(dir, 'run-'));
  const r = spawnSync(node, args, {
    cwd: work,
    env: { PATH: process.env.PATH ?? '', HOME: work, SQLITE_PATH: path.join(work, 'data', 'school.db'), LOG_LEVEL: 'info', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr, left: leftIn(work) };
}

/** What an operator would run each with: arguments that reach the store where there is one. */
const ARGS: Record<string, string[]> = { 'scripts/import.js': ['--demo'], 'scripts/outbox.js': ['--list'] };

test('the entry points tested are every file the sources start a process from', () => {
  expect(ENTRY_POINTS.map((e) => e.file).sort()).toEqual(entrySources());
});

describe('on this Node, told it is 20.20.2', () => {
  // Preloaded: the version the check reads, and a list of every module loaded when the process ends.
  const fake = () => {
    const version = path.join(dir, 'as-node20.js');
    fs.writeFileSync(version, "Object.defineProperty(process.versions, 'node', { value: '20.20.2' });\n");
    const loaded = path.join(dir, 'loaded.json');
    const record = path.join(dir, 'record.js');
    fs.writeFileSync(
      record,
      `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(loaded)}, JSON.stringify(Object.keys(require.cache))));\n`,
    );
    return { preload: ['-r', version, '-r', record], loaded: () => JSON.parse(fs.readFileSync(loaded, 'utf8')) as string[] };
  };

  test.each(ENTRY_POINTS.map((e) => [e.file]))('%s stops with the one line, exit 1, having loaded nothing but the check', (file) => {
    const { preload, loaded } = fake();
    const entry = path.join(BUILD_DIR, file);
    const r = run(process.execPath, [...preload, entry, ...(ARGS[file] ?? [])]);
    expect([r.status, r.stdout, r.stderr]).toEqual([1, '', `${refusal('20.20.2')}\n`]);
    expect(r.left).toEqual([]);
    const ours = loaded().filter((f) => !f.startsWith(dir));
    expect(ours.sort()).toEqual(
      [
        entry,
        path.join(BUILD_DIR, 'src', 'basics', 'supported-node.js'),
        path.join(BUILD_DIR, 'src', 'basics', 'paths.js'),
        path.join(PROJECT_ROOT, 'scripts', 'check-node.js'),
      ].sort(),
    );
  });
});

describeOldNode(`on an unsupported Node (${OLD_NODE ?? 'none found'})`, () => {
  const version = () => spawnSync(OLD_NODE!, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
  const line = () => `${refusal(version())}\n`;

  test("the systemd unit's command line: the one line, exit 1, no signal; WORKERS=2 the same (no worker forked)", () => {
    expect(OLD_NODE).toBeDefined();
    const unit = fs.readFileSync(path.join(PROJECT_ROOT, 'deploy', 'systemd', 'student-info.service'), 'utf8');
    const [node, ...args] = /^ExecStart=(.+)$/m.exec(unit)![1]!.split(/\s+/);
    expect(node).toBe('/usr/bin/node');
    const built = args.map((a) => a.replace('/opt/student-info/dist/', `${BUILD_DIR}/`));
    expect(built).toContain(path.join(BUILD_DIR, 'src', 'main.js'));
    for (const env of [{}, { WORKERS: '2' }] as Record<string, string>[]) {
      const r = run(OLD_NODE!, built, env);
      expect([r.status, r.signal, r.stdout, r.stderr]).toEqual([1, null, '', line()]);
      expect(r.left).toEqual([]);
    }
  });

  test.each(ENTRY_POINTS.map((e) => [e.file]))('%s: the one line, exit 1, nothing written', (file) => {
    expect(OLD_NODE).toBeDefined();
    const r = run(OLD_NODE!, [path.join(BUILD_DIR, file), ...(ARGS[file] ?? [])]);
    expect([r.status, r.signal, r.stdout, r.stderr]).toEqual([1, null, '', line()]);
    expect(r.left).toEqual([]);
  });
});

describe('no build', () => {
  /** A checkout that was never built: package.json and the Node check, no dist/. */
  function unbuilt(): string {
    const checkout = path.join(dir, 'checkout');
    fs.mkdirSync(path.join(checkout, 'scripts'), { recursive: true });
    fs.copyFileSync(path.join(PROJECT_ROOT, 'package.json'), path.join(checkout, 'package.json'));
    fs.copyFileSync(path.join(PROJECT_ROOT, 'scripts', 'check-node.js'), path.join(checkout, 'scripts', 'check-node.js'));
    return checkout;
  }
  const npm = (cwd: string, ...args: string[]) =>
    spawnSync('npm', args, {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: dir, npm_config_update_notifier: 'false' },
      encoding: 'utf8',
      timeout: 60_000,
    });

  test.each([
    [['start'], 'dist/src/main.js'],
    [['run', 'import', '--', '--demo'], 'dist/scripts/import.js'],
    [['run', 'outbox', '--', '--list'], 'dist/scripts/outbox.js'],
  ])('npm %j says in one line to run the build, exit 1', (args, file) => {
    const checkout = unbuilt();
    const r = npm(checkout, ...args);
    expect([r.status, r.stderr]).toEqual([1, `error: no build: ${file} is missing; run \`npm run build\`\n`]);
    expect(fs.readdirSync(checkout).sort()).toEqual(['package.json', 'scripts']);
  });

  test('only a missing file of dist/ is a missing build; a built one, or any other script, is left to node', () => {
    expect(missingBuild(path.join(PROJECT_ROOT, 'dist', 'nothing-here.js'))).toBe(
      'error: no build: dist/nothing-here.js is missing; run `npm run build`',
    );
    expect(missingBuild(path.join(PROJECT_ROOT, 'scripts', 'check-node.js'))).toBeNull();
    expect(missingBuild(path.join(PROJECT_ROOT, 'scripts', 'nothing-here.js'))).toBeNull();
    expect(missingBuild(path.join(dir, 'dist', 'src', 'main.js'))).toBeNull();
    expect(missingBuild(undefined)).toBeNull();
  });
});
