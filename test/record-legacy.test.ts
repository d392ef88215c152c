import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ACCEPTED, accepted, ALLOWANCES, describeAccepted, kindFor } from '../scripts/legacy/accepted';
import { has, MATRIX } from '../scripts/legacy/matrix';
import { type Recorded, readRecording, recordingChanges } from '../scripts/legacy/recording';
import { BUILD_DIR, PROJECT_ROOT } from './helpers/service';

/**
 * The matrix and its recording command (scripts/record-legacy.ts): the configurations cover what
 * issue 23 asks, a fresh recording is told from the committed one by the replay's comparison, the
 * accepted list is whole and printed, and `--check`, run from a build against a legacy host that
 * answers otherwise, fails with the cases that changed.
 */

describe('the matrix', () => {
  const NO_SLASH = (ns: string) => !ns.endsWith('/');
  test('names each configuration once, and every namespace form meets both sites', () => {
    expect(new Set(MATRIX.map((c) => c.name)).size).toBe(MATRIX.length);
    const forms = (ns: string) => (ns.startsWith('urn:') ? 'urn' : NO_SLASH(ns) ? 'no-slash' : 'slash');
    const pairs = new Set(MATRIX.map((c) => `${forms(c.namespace)} ${c.virtualDir === '' ? 'root' : 'vdir'}`));
    expect([...pairs].sort()).toEqual(['no-slash root', 'no-slash vdir', 'slash root', 'slash vdir', 'urn root', 'urn vdir']);
    // the full corpus runs once per namespace form at least
    expect(new Set(MATRIX.filter((c) => c.corpus === 'full').map((c) => forms(c.namespace))).size).toBe(3);
  });

  test('has every protocol setting the issue names', () => {
    const ALL = ['HttpSoap', 'HttpSoap12', 'HttpGet', 'HttpPost', 'Documentation'];
    const sets = MATRIX.map((c) => [...c.protocols.split(',')].sort().join(','));
    const expected = [
      ALL,
      ...ALL.map((off) => ALL.filter((p) => p !== off)),
      ['HttpSoap', 'HttpSoap12'],
      ['HttpSoap12', 'HttpSoap', 'HttpPostLocalhost', 'Documentation'],
    ];
    for (const e of expected) expect(sets).toContain([...e].sort().join(','));
  });
});

describe('the accepted differences', () => {
  // The evidence is .NET's reference source, or, for what IIS answers before ASP.NET, IIS's own configuration.
  test('each has a reason and the reference source that shows it, and the list prints them all', () => {
    const text = describeAccepted();
    for (const a of [...ACCEPTED, ...ALLOWANCES]) {
      expect('reason' in a ? a.reason : a.rule).not.toBe('');
      expect(a.evidence).toMatch(/\.cs\b|\bapplicationHost\.config\b/);
      expect(text).toContain(a.evidence);
    }
  });

  test('apply by name and configuration', () => {
    const withDocs = MATRIX.find((c) => has(c, 'Documentation'))!;
    const withoutDocs = MATRIX.find((c) => !has(c, 'Documentation'))!;
    expect(accepted(withDocs, 'pages/AboutUs/help-op-GetAboutUs')).toBeDefined();
    expect(accepted(withDocs, 'protocols/AboutUs/help-op')).toBeDefined();
    expect(accepted(withoutDocs, 'protocols/AboutUs/help-op')).toBeUndefined();
    expect(accepted(withDocs, 'pages/AboutUs/help')).toBeUndefined();
    expect(accepted(withDocs, 'http-post/ct-json')).toBeDefined();
    expect(accepted(withDocs, 'http-post/ct-json-x')).toBeUndefined();
  });

  test('a legacy runtime error page is compared as one, whatever the case', () => {
    const page = { status: 500, headers: { 'content-type': 'text/html' }, body: '<title>Runtime Error</title>' };
    expect(kindFor({ kind: 'full' }, page)).toBe('error');
    expect(kindFor({ kind: 'help' }, page)).toBe('error');
    expect(kindFor({ kind: 'page' }, { ...page, status: 200 })).toBe('page');
  });
});

describe('a fresh recording against the committed one', () => {
  const committed = readRecording('root-tempuri-soap11-post').cases;
  test('the same answers: nothing changed', () => {
    expect(recordingChanges(committed, committed)).toEqual([]);
  });
  test('a changed status, a new case and a case gone are each named', () => {
    const fresh: Recorded[] = committed.slice(1).map((c, i) => (i === 0 ? { ...c, legacy: { ...c.legacy, status: 418 } } : c));
    fresh.push({ ...committed[1], name: 'protocols/new-case' });
    const found = recordingChanges(committed, fresh);
    expect(found).toHaveLength(3);
    expect(found[0]).toMatch(new RegExp(`^✗ ${committed[1].name}\\n    status: legacy ${committed[1].legacy.status} vs ours 418`));
    expect(found[1]).toBe('+ protocols/new-case: not in the committed recording');
    expect(found[2]).toBe(`- ${committed[0].name}: in the committed recording, no longer in the corpus`);
  });
});

describe('the command, from a build', () => {
  const CLI = path.join(BUILD_DIR, 'scripts', 'record-legacy.js');
  const run = (env: Record<string, string>, ...args: string[]) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [CLI, ...args],
        { cwd: PROJECT_ROOT, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 60000 },
        (error, stdout, stderr) =>
          resolve({ status: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr }),
      );
    });

  test('--list names the configurations and prints the accepted list', async () => {
    const r = await run({}, '--list');
    expect(r.status).toBe(0);
    for (const c of MATRIX) expect(r.stdout).toContain(c.name);
    expect(r.stdout).toContain(describeAccepted());
  });

  test('a wrong argument, or a configuration not in the matrix, is refused with the usage', async () => {
    for (const args of [['--nonsense'], ['--only', 'no-such-configuration']]) {
      const r = await run({}, ...args);
      expect(r.status).toBe(2);
      expect(r.stderr).toContain('usage: npm run record-legacy');
    }
  });

  test('--check fails, naming the cases, when the legacy host no longer answers as recorded', async () => {
    // A stand-in for start.sh: it serves the configuration's virtual directory, answering every
    // request with the same small text, as no ASMX host would.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-legacy-host-'));
    fs.writeFileSync(
      path.join(dir, 'server.js'),
      "require('http').createServer((q, s) => { q.resume(); q.on('end', () => s.end('not asmx')); }).listen(Number(process.argv[2]), '127.0.0.1');\n",
    );
    fs.writeFileSync(path.join(dir, 'start.sh'), `#!/bin/bash\nexec "${process.execPath}" "$(dirname "$0")/server.js" "$1"\n`, {
      mode: 0o755,
    });
    try {
      const r = await run({ LEGACY_HOST_DIR: dir }, '--check', '--only', 'root-tempuri-soap11-post');
      expect(r.stderr).toBe('');
      expect(r.stdout).toMatch(/^root-tempuri-soap11-post: \d+ cases, \d+ differ from the committed recording\n/);
      expect(r.stdout).toContain('✗ protocols/PushNotificationMobile/soap11\n');
      expect(r.stdout).toContain(describeAccepted());
      expect(r.stdout).toMatch(/answers of the legacy host differ from test\/fixtures\/legacy\/: record them again/);
      expect(r.status).toBe(1);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
