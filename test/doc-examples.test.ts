/**
 * Issue 32, point 1: every example a reader of the README and docs/ would run runs as written.
 *
 * Each code block is marked (test/helpers/doc-examples.ts): `<!-- example: NAME -->` blocks are taken
 * from the Markdown and run here, `<!-- not run: why -->` blocks are shown only, `text` and `mermaid`
 * fences are samples; any other block fails the first test. The runs happen where a reader would be:
 * a copy of the checkout in a folder named unlike the package, with spaces (a reader's clone may have
 * any name: the examples must not assume one; its files as git lists them; its node_modules a link to
 * this checkout's, what `npm ci` installs, which nothing here writes into) and, beside it, the host app
 * the Express page makes.
 * The only changes to a block's text: the README's curl calls go to the test's port instead of 8080
 * (`localhost:8080` replaced), and curl is wrapped in a shell function that adds the status code to
 * its output. Settings come from the environment, as the docs say (PORT=0: a free port, said in the
 * start line). npm prefers its cache (npm_config_prefer_offline): once an earlier run has cached
 * what the host app's install resolves, it needs no network.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { codeBlocks, documentedBlocks, examplesByName, markingProblems, shellCommands } from './helpers/doc-examples';
import { request, startService } from './helpers/service';

const ROOT = path.join(__dirname, '..');
const blocks = documentedBlocks(ROOT);
const examples = examplesByName(blocks);
/** Every example this suite runs; the docs' `example:` names must be exactly these. */
const RUN_HERE = [
  'express-install',
  'express-host',
  'express-data',
  'express-run',
  'readme-import',
  'readme-curl',
  'import',
  'outbox-list',
];
/** The checkout's files as a clone has them (.gitignore included: npm pack reads it), with this working tree's changes. */
function checkoutFiles(): string[] {
  const r = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ls-files: ${r.stderr}`);
  return r.stdout.split('\0').filter((f) => f !== '' && fs.existsSync(path.join(ROOT, f)));
}

function example(name: string): string {
  const block = examples.get(name);
  if (block === undefined) throw new Error(`no <!-- example: ${name} --> block in README.md or docs/`);
  return block.text;
}

/** How this machine reaches the network (its proxy, its certificate authorities), which the reader's shell has too. */
const NETWORK = /^(https?_proxy|no_proxy|NODE_EXTRA_CA_CERTS|SSL_CERT_(FILE|DIR))$/i;

/** A reader's shell: nothing of the npm or jest running this suite, and none of the service's settings. */
function readerEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => NETWORK.test(e[0]) && e[1] !== undefined)),
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? os.homedir(),
    npm_config_prefer_offline: 'true',
    npm_config_update_notifier: 'false',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    ...extra,
  };
}

/** Runs a block with bash, stopping at the first command that fails. */
function sh(text: string, cwd: string, extra: Record<string, string> = {}) {
  const r = spawnSync('bash', ['-e', '-o', 'pipefail', '-c', text], { cwd, env: readerEnv(extra), encoding: 'utf8', timeout: 600_000 });
  return {
    status: r.status,
    stdout: r.stdout,
    all: `${text}\n-> ${r.status ?? r.signal}\n${r.stdout}\n${r.stderr}${r.error ? `\n${r.error.message}` : ''}`,
  };
}

function expectRan(r: ReturnType<typeof sh>): void {
  if (r.status !== 0) throw new Error(`failed:\n${r.all}`);
}

describe('the code blocks of README.md and docs/', () => {
  test('each is an example run here, marked not run, or a sample by its language', () => {
    expect(blocks.length).toBeGreaterThan(20);
    expect(markingProblems(blocks)).toEqual([]);
    expect([...examples.keys()].sort()).toEqual([...RUN_HERE].sort());
    // A reason that names the suite running the same thing names one that exists.
    const named = blocks.flatMap((b) =>
      b.marker?.kind === 'not run' ? [...b.marker.why.matchAll(/test\/[\w.-]+\.test\.ts/g)].map((m) => m[0]) : [],
    );
    expect(named.filter((f) => !fs.existsSync(path.join(ROOT, f)))).toEqual([]);
  });

  test('an unmarked sh or js block, a fence without a language, a name used twice and a reasonless not-run are reported', () => {
    const text = [
      '<!-- example: one -->',
      '```sh',
      'echo 1',
      '```',
      '```sh',
      'echo 2',
      '```',
      '  <!-- not run: a placeholder host -->',
      '  ```sh',
      '  curl http://iis-host/',
      '  ```',
      '```',
      'output',
      '```',
      '```text',
      'output',
      '```',
      '```mermaid',
      'flowchart TB',
      '```',
      '<!-- example: one -->',
      '```js',
      'x()',
      '```',
      '<!-- not run: -->',
      '```json',
      '{}',
      '```',
      '```js',
      'y()',
      '```',
    ].join('\n');
    const found = codeBlocks('a.md', text);
    expect(found.map((b) => [b.line, b.lang, b.marker?.kind ?? null])).toEqual([
      [2, 'sh', 'example'],
      [5, 'sh', null],
      [9, 'sh', 'not run'],
      [12, '', null],
      [15, 'text', null],
      [18, 'mermaid', null],
      [22, 'js', 'example'],
      [26, 'json', 'not run'],
      [29, 'js', null],
    ]);
    expect(found[2]!.text).toBe('curl http://iis-host/\n');
    expect(markingProblems(found)).toEqual([
      'a.md:5: a sh block neither run (<!-- example: NAME -->) nor marked <!-- not run: why -->',
      'a.md:12: a fence without a language (text for output, sh or js for what runs)',
      "a.md:22: example name 'one' already used at a.md:2",
      'a.md:26: <!-- not run: --> says why not',
      'a.md:29: a js block neither run (<!-- example: NAME -->) nor marked <!-- not run: why -->',
    ]);
  });

  test('a shell block cuts into its commands, continuation lines kept, comments above as titles', () => {
    expect(shellCommands('# one\n# more\ncurl a \\\n  -d b\n\n# two\ncurl c   # says c\n')).toEqual([
      { title: 'one more', command: 'curl a \\\n  -d b\n' },
      { title: 'two', command: 'curl c   # says c\n' },
    ]);
  });
});

describe('from a checkout, as a reader runs them', () => {
  let dir: string;
  let checkout: string;
  let host: string;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'student-info-examples-'));
    checkout = path.join(dir, 'a clone, any name');
    host = path.join(dir, 'my-app');
    for (const file of checkoutFiles()) fs.cpSync(path.join(ROOT, file), path.join(checkout, file));
    fs.symlinkSync(fs.realpathSync(path.join(ROOT, 'node_modules')), path.join(checkout, 'node_modules'));
    // docs/express.md, in the checkout: pack it (prepare builds dist/), make the host app beside it, install the tarball into it.
    expectRan(sh(example('express-install'), checkout));
  }, 660_000);

  afterAll(() => {
    if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
  });

  test("the import commands of docs/import.md and the README, with the reader's files (the demo's, copied)", () => {
    fs.copyFileSync(path.join(checkout, 'demo', 'students.csv'), path.join(checkout, 'students.csv'));
    fs.copyFileSync(path.join(checkout, 'demo', 'devices.csv'), path.join(checkout, 'devices.csv'));
    // European Excel's export: the same rows, ;-separated (no demo field holds a comma).
    fs.writeFileSync(path.join(checkout, 'export.csv'), fs.readFileSync(path.join(checkout, 'students.csv'), 'utf8').replace(/,/g, ';'));
    // Each command's own line, npm's banner of the script it runs left out.
    const imported = (r: ReturnType<typeof sh>) =>
      r.stdout
        .split('\n')
        .filter((l) => !/^(> |$)/.test(l))
        .map((l) => l.replace(/ in \d+\.\d s$/, ''));

    const page = sh(example('import'), checkout);
    expectRan(page);
    expect(imported(page)).toEqual([
      'imported 10 students, 7 devices into ./data/student-info.db',
      'imported 10 students, 0 devices, removed 0 students absent from the file into ./data/student-info.db',
      'imported 10 students, 0 devices into ./data/student-info.db',
      'imported 10 students, 7 devices into ./data/student-info.db',
    ]);
    const readme = sh(example('readme-import'), checkout);
    expectRan(readme);
    expect(imported(readme)).toEqual([
      'imported 10 students, 7 devices into ./data/student-info.db',
      'imported 10 students, 7 devices into ./data/student-info.db',
    ]);
  }, 180_000);

  test("npm start, then the README's curl calls (each 200 with its answer) and docs/sms.md's outbox list", async () => {
    const service = await startService({
      command: ['npm', 'start'],
      cwd: checkout,
      fresh: true,
      env: { SQLITE_PATH: undefined, ADMIN_PORT: '0', HOST: '127.0.0.1' },
    });
    const start = await service.waitFor((l) => l.msg.startsWith('listening on '));
    try {
      expect(start.msg).toContain(`store SQLite ${path.join(checkout, 'data', 'student-info.db')}: 10 students, 7 devices`);
      const calls = example('readme-curl').replaceAll('localhost:8080', `localhost:${service.port}`);
      expect(calls).not.toMatch(/:8080\b/);
      const answers = shellCommands(calls).map(({ title, command }) => {
        const r = sh(`curl() { command curl --write-out '\\n%{http_code}' "$@"; }\n${command}`, checkout);
        expectRan(r);
        const status = r.stdout.slice(r.stdout.lastIndexOf('\n') + 1);
        return { title, status, body: r.stdout.slice(0, r.stdout.lastIndexOf('\n')) };
      });
      const roster = expect.stringMatching(/<fullName>Ali Hassan<\/fullName>[\s\S]*<fullName>حسين علي<\/fullName>/);
      expect(answers).toEqual([
        {
          title: 'SOAP 1.1',
          status: '200',
          body: expect.stringContaining('<GetTokenDeviceResult>fcm:demo-token-1001</GetTokenDeviceResult>'),
        },
        { title: "SOAP 1.2 (show_active travels as its UTF-16 code: 49 is '1')", status: '200', body: roster },
        { title: 'HTTP GET (show_active is the character itself)', status: '200', body: roster },
        { title: 'HTTP POST', status: '200', body: '' }, // AuthCode answers nothing: the code is queued
      ]);
      for (const a of answers.slice(1, 3)) expect(a.body).not.toContain('Omar Adel'); // ShowActive 0

      // The code the POST queued (SMS_GATEWAY=none sends nothing), listed by the outbox command.
      const outbox = sh(example('outbox-list'), checkout);
      expectRan(outbox);
      expect(outbox.stdout).toMatch(/^1\tpending\t\+9647701234567\t0\t/m);
    } finally {
      // npm passes the signal on and ends by it; the service behind it stops gracefully and says so.
      service.proc.kill('SIGTERM');
      await service.exited;
      fs.rmSync(service.dir, { recursive: true, force: true });
    }
    expect(await service.waitFor((l) => l.msg === 'stopped' && l.pid === start.pid)).toMatchObject({ exitCode: 0 });
  }, 180_000);

  test('docs/express.md: the host app, with the package installed from its tarball, answers under /StudentService and stops cleanly', async () => {
    const installed = path.join(host, 'node_modules', 'student-info-service');
    expect(fs.lstatSync(installed).isSymbolicLink()).toBe(false); // a copy from the tarball, not a link to the checkout
    // Recorded by the tarball's path, through the checkout's folder whatever its name (docs/express.md).
    expect(JSON.parse(fs.readFileSync(path.join(host, 'package.json'), 'utf8')).dependencies['student-info-service']).toBe(
      'file:../a clone, any name/student-info-service-1.0.0.tgz',
    );
    expect(fs.existsSync(path.join(installed, 'dist', 'src', 'process', 'mount.js'))).toBe(true);
    expect(fs.existsSync(path.join(installed, 'src'))).toBe(false);
    fs.writeFileSync(path.join(host, 'server.js'), example('express-host'));
    const data = sh(example('express-data'), host);
    expectRan(data);
    expect(data.stdout).toMatch(/^imported 10 students, 7 devices into \.\/data\/student-info\.db/);

    // bash runs the block's one command in its own place (exec), so the signal reaches node itself.
    const app = spawn('bash', ['-c', example('express-run')], {
      cwd: host,
      env: readerEnv({ PORT: '0' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = collect(app);
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      app.once('exit', (code, signal) => resolve({ code, signal })),
    );
    try {
      const port = Number((await output.waitFor(/listening on http:\/\/localhost:(\d+)\/StudentService\//))[1]);
      const wsdl = await request(port, '/StudentService/PushNotificationMobile.asmx?wsdl');
      expect([wsdl.status, wsdl.body]).toEqual([
        200,
        expect.stringContaining(`<soap:address location="http://127.0.0.1:${port}/StudentService/PushNotificationMobile.asmx" />`),
      ]);
      const token = await request(port, '/StudentService/PushNotificationMobile.asmx/GetTokenDevice?id=dev-1001');
      expect([token.status, token.body]).toEqual([200, expect.stringContaining('>fcm:demo-token-1001</string>')]);
      const soap = await request(port, '/StudentService/PushNotificationMobile.asmx', {
        method: 'POST',
        headers: { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: '"http://tempuri.org/GetTokenDevice"' },
        body: '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><GetTokenDevice xmlns="http://tempuri.org/"><id>dev-1002</id></GetTokenDevice></soap:Body></soap:Envelope>',
      });
      expect([soap.status, soap.body]).toEqual([
        200,
        expect.stringContaining('<GetTokenDeviceResult>fcm:demo-token-1002</GetTokenDeviceResult>'),
      ]);
      expect(await request(port, '/health')).toMatchObject({ status: 200, body: 'ok' });
    } finally {
      app.kill('SIGTERM');
    }
    // The example's shutdown: the server closed, then SMS delivery stopped and the store closed; node ends by itself.
    expect([await exited, output.text()]).toEqual([{ code: 0, signal: null }, expect.not.stringMatching(/Error/)]);
  }, 180_000);
});

/** A child's stdout and stderr, and a wait for a pattern in stdout (failing with everything seen when it exits first). */
function collect(child: ChildProcess) {
  let out = '';
  let err = '';
  let ended = false;
  const waiters: Array<() => void> = [];
  const wake = () => {
    for (const w of waiters.splice(0)) w();
  };
  child.stdout!.on('data', (d: Buffer) => ((out += d.toString()), wake()));
  child.stderr!.on('data', (d: Buffer) => ((err += d.toString()), wake()));
  child.once('exit', () => ((ended = true), wake()));
  return {
    text: () => `${out}${err}`,
    waitFor: (pattern: RegExp) =>
      new Promise<RegExpExecArray>((resolve, reject) => {
        const check = () => {
          const m = pattern.exec(out);
          if (m !== null) return resolve(m);
          if (ended) return reject(new Error(`exited before ${pattern}:\n${out}\n${err}`));
          waiters.push(check);
        };
        check();
      }),
  };
}
