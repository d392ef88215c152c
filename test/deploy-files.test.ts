import { spawnSync } from 'child_process';
import fs from 'fs';
import os from 'os';
import path from 'path';
import sax from 'sax';
import { parseStringPromise } from 'xml2js';
import { PROJECT_ROOT } from './helpers/service';

/** The IIS and systemd recipes of deploy/, checked as far as this machine can. */

const DEPLOY = path.join(PROJECT_ROOT, 'deploy');
const read = (file: string) => fs.readFileSync(path.join(DEPLOY, file), 'utf8');

/** Strict XML well-formedness, as IIS's configuration reader requires (no `--` in comments, ...). */
function wellFormed(xml: string): void {
  const parser = sax.parser(true, {});
  parser.onerror = (e) => {
    throw e;
  };
  parser.write(xml).close();
}

type Config = { configuration: { 'system.webServer': Record<string, unknown>[] } };
const webServer = async (file: string) => (await parseStringPromise(read(file)) as Config).configuration['system.webServer'][0]!;

interface Rule {
  $: { name: string };
  match: { $: { url: string } }[];
  action: { $: { type: string; url: string } }[];
  serverVariables: { set: { $: { name: string; value: string } }[] }[];
}

describe.each([
  ['iis/web.config', 'http://127.0.0.1:8080/{R:0}'],
  ['iis/vdir/web.config', 'http://127.0.0.1:8080/StudentService/{R:0}'],
])('%s (URL Rewrite + ARR)', (file, target) => {
  test('is well-formed XML', () => {
    expect(() => wellFormed(read(file))).not.toThrow();
  });

  test('forwards every URL to the service with the forwarded host and scheme', async () => {
    const rewrite = (await webServer(file)).rewrite as { rules: { rule: Rule[] }[] }[];
    const rules = rewrite[0]!.rules[0]!.rule;
    expect(rules.map((r) => [r.match[0]!.$.url, r.action[0]!.$])).toEqual([
      ['.*', { type: 'Rewrite', url: target, appendQueryString: 'true' }],
      ['.*', { type: 'Rewrite', url: target, appendQueryString: 'true' }],
    ]);
    expect(rules.map((r) => Object.fromEntries(r.serverVariables[0]!.set.map((s) => [s.$.name, s.$.value])))).toEqual([
      { HTTP_X_FORWARDED_HOST: '{HTTP_HOST}', HTTP_X_FORWARDED_PROTO: 'https' },
      { HTTP_X_FORWARDED_HOST: '{HTTP_HOST}', HTTP_X_FORWARDED_PROTO: 'http' },
    ]);
  });
});

describe('iis/httpplatform/web.config (HttpPlatformHandler)', () => {
  test('is well-formed XML', () => {
    expect(() => wellFormed(read('iis/httpplatform/web.config'))).not.toThrow();
  });

  test('starts the build with node and gives it the port IIS chose', async () => {
    const platform = ((await webServer('iis/httpplatform/web.config')).httpPlatform as { $: Record<string, string>; environmentVariables: { environmentVariable: { $: { name: string; value: string } }[] }[] }[])[0]!;
    expect(platform.$).toMatchObject({ processPath: 'C:\\Program Files\\nodejs\\node.exe', arguments: '--max-semi-space-size=2 dist\\src\\main.js' });
    expect(fs.existsSync(path.join(PROJECT_ROOT, 'src', 'main.ts'))).toBe(true);
    const env = Object.fromEntries(platform.environmentVariables[0]!.environmentVariable.map((v) => [v.$.name, v.$.value]));
    expect(env).toMatchObject({ PORT: '%HTTP_PLATFORM_PORT%', HOST: '127.0.0.1' });
  });
});

describe('systemd/student-info.service', () => {
  const unit = read('systemd/student-info.service');
  const setting = (name: string) => new RegExp(`^${name}=(.*)$`, 'm').exec(unit)?.[1];

  test('runs node on the build as a non-root user, restarts on failure, reads one environment file', () => {
    expect(setting('User')).toBe('student-info');
    expect(setting('ExecStart')).toBe('/usr/bin/node --max-semi-space-size=2 /opt/student-info/dist/src/main.js');
    expect(setting('Restart')).toBe('on-failure');
    expect(setting('EnvironmentFile')).toBe('/etc/student-info/env');
    expect(setting('KillMode')).toBe('mixed');
    // The environment file names only settings the service knows.
    const names = read('systemd/student-info.env').split('\n').filter((l) => /^[A-Z_]+=/.test(l)).map((l) => l.split('=')[0]);
    const readme = fs.readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
    for (const name of names) expect([name, readme.includes(`| \`${name}\` |`)]).toEqual([name, true]);
  });

  const analyze = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
  (analyze.status === 0 ? test : test.skip)('passes systemd-analyze verify', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'student-info-unit-'));
    try {
      // Only the path of node is substituted, where it is not /usr/bin/node on this machine.
      const file = path.join(dir, 'student-info.service');
      fs.writeFileSync(file, fs.existsSync('/usr/bin/node') ? unit : unit.replace('/usr/bin/node', process.execPath));
      const r = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
      expect([r.status, r.stderr.split('\n').filter((l) => l.includes('student-info.service'))]).toEqual([0, []]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
