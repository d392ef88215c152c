import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sax from 'sax';
import { parseStringPromise } from 'xml2js';
import type { IncomingMessage } from 'node:http';
import { loadConfig } from '../src/config';
import { clientAddress } from '../src/transport/context';
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
const webServer = async (file: string) => ((await parseStringPromise(read(file))) as Config).configuration['system.webServer'][0]!;

interface Rule {
  $: { name: string };
  match: { $: { url: string } }[];
  action: { $: { type: string; url: string } }[];
  serverVariables: { set: { $: { name: string; value: string } }[] }[];
}

/**
 * The caller the service sees for a request from IIS on loopback carrying `forwardedFor`, under the
 * TRUST_PROXY of `env` (validated as at start).
 */
function trustedAddress(env: Record<string, string | undefined>, forwardedFor: string): string | null {
  const { trustProxy } = loadConfig({ TRUST_PROXY: env.TRUST_PROXY });
  const req = { headers: { 'x-forwarded-for': forwardedFor }, socket: { remoteAddress: '::ffff:127.0.0.1' } } as unknown as IncomingMessage;
  return clientAddress(req, trustProxy);
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

  test("leaves ARR's X-Forwarded-For (ip:port) alone and names the TRUST_PROXY that reads it", () => {
    // A rule setting HTTP_X_FORWARDED_FOR would replace the client's address that ARR appends.
    expect(read(file)).not.toMatch(/X_FORWARDED_FOR/i);
    expect(read(file)).toMatch(/TRUST_PROXY=true/);
    // The form ARR writes, after whatever the client sent, is read as the client's address.
    expect(trustedAddress({ TRUST_PROXY: 'true' }, '198.51.100.1, 203.0.113.7:50123')).toBe('203.0.113.7');
    expect(trustedAddress({ TRUST_PROXY: 'true' }, '198.51.100.1, [2001:db8::7]:50123')).toBe('2001:db8::7');
  });
});

type Platform = { $: Record<string, string>; environmentVariables: { environmentVariable: { $: { name: string; value: string } }[] }[] };
const httpPlatform = async () => ((await webServer('iis/httpplatform/web.config')).httpPlatform as Platform[])[0]!;
const platformEnv = async (): Promise<Record<string, string | undefined>> =>
  Object.fromEntries((await httpPlatform()).environmentVariables[0]!.environmentVariable.map((v) => [v.$.name, v.$.value]));

describe('iis/httpplatform/web.config (HttpPlatformHandler)', () => {
  test('is well-formed XML', () => {
    expect(() => wellFormed(read('iis/httpplatform/web.config'))).not.toThrow();
  });

  test('starts the build with node and gives it the port IIS chose', async () => {
    const platform = await httpPlatform();
    expect(platform.$).toMatchObject({
      processPath: 'C:\\Program Files\\nodejs\\node.exe',
      arguments: '--max-semi-space-size=2 dist\\src\\main.js',
    });
    expect(fs.existsSync(path.join(PROJECT_ROOT, 'src', 'main.ts'))).toBe(true);
    const env = await platformEnv();
    expect(env).toMatchObject({ PORT: '%HTTP_PLATFORM_PORT%', HOST: '127.0.0.1' });
  });

  test("sets TRUST_PROXY, so that the client's ip:port that HttpPlatformHandler forwards is the caller", async () => {
    const env = await platformEnv();
    expect(env.TRUST_PROXY).toBe('true');
    expect(trustedAddress(env, '203.0.113.7:50123')).toBe('203.0.113.7');
    expect(trustedAddress(env, '[2001:db8::7]:50123')).toBe('2001:db8::7');
    // Without the setting the same request would count as IIS itself.
    expect(trustedAddress({ ...env, TRUST_PROXY: undefined }, '203.0.113.7:50123')).toBe('127.0.0.1');
  });
});

describe("IIS's access log: no query string, so no AuthCode code or phone (issue 30, rule 6)", () => {
  /** IIS's names for the W3C log fields (logExtFileFlags). */
  const IIS_FIELDS = [
    'Date',
    'Time',
    'ClientIP',
    'UserName',
    'SiteName',
    'ComputerName',
    'ServerIP',
    'Method',
    'UriStem',
    'UriQuery',
    'HttpStatus',
    'Win32Status',
    'BytesSent',
    'BytesRecv',
    'TimeTaken',
    'ServerPort',
    'UserAgent',
    'Cookie',
    'Referer',
    'ProtocolVersion',
    'Host',
    'HttpSubStatus',
  ];
  const script = () => read('iis/access-log.cmd');
  /** The fields each appcmd line of `text` sets for a site, and where it commits them. */
  const settings = (text: string) =>
    [
      ...text.matchAll(
        /appcmd\.exe set config -section:system\.applicationHost\/sites "\/\[name='([^']+)'\]\.logFile\.logExtFileFlags:([^"]*)" \/commit:(\w+)/g,
      ),
    ].map((m) => ({
      site: m[1],
      fields: m[2]!.split(',').map((f) => f.trim()),
      commit: m[3],
    }));

  test("access-log.cmd sets the site's log fields in applicationHost.config without the query string, the referer or cookies", () => {
    const [set, ...more] = settings(script());
    expect(more).toEqual([]);
    expect(set).toMatchObject({ site: '%SITE%', commit: 'apphost' });
    // Every name is one IIS knows (a wrong one fails the whole command), and a request is still logged.
    for (const f of set!.fields) expect([f, IIS_FIELDS.includes(f)]).toEqual([f, true]);
    expect(set!.fields).toEqual(expect.arrayContaining(['Date', 'Time', 'ClientIP', 'Method', 'UriStem', 'HttpStatus', 'TimeTaken']));
    expect(set!.fields).not.toEqual(expect.arrayContaining(['UriQuery']));
    expect(set!.fields.filter((f) => ['UriQuery', 'Referer', 'Cookie'].includes(f))).toEqual([]);
    // A batch file: Windows line ends, and no unescaped & that cmd would take for a second command.
    expect(script()).not.toMatch(/[^\r]\n/);
    expect(script()).not.toContain('&');
    expect(script()).toMatch(/^if "%SITE%"=="" set "SITE=Default Web Site"\r$/m);
  });

  test('the README runs it, with the same command, for both ways; every web.config points to it and holds no locked logging section', () => {
    const readme = read('iis/README.md');
    expect(readme).toContain('access-log.cmd "Default Web Site"');
    const [shown] = settings(readme);
    expect(shown).toEqual({ ...settings(script())[0], site: 'Default Web Site' });
    for (const file of ['iis/web.config', 'iis/vdir/web.config', 'iis/httpplatform/web.config']) {
      expect([file, read(file).includes('run access-log.cmd once')]).toEqual([file, true]);
      // httpLogging is locked to applicationHost.config by default: in a web.config it stops the site (500.19).
      expect([file, /<httpLogging\b/.test(read(file).replace(/<!--[\s\S]*?-->/g, ''))]).toEqual([file, false]);
    }
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
    // It runs behind the nginx recipes on the same machine, which pass the client's address.
    expect(read('systemd/student-info.env')).toMatch(/^TRUST_PROXY=true$/m);
    // The environment file names only settings the service knows.
    const names = read('systemd/student-info.env')
      .split('\n')
      .filter((l) => /^[A-Z_]+=/.test(l))
      .map((l) => l.split('=')[0]);
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
