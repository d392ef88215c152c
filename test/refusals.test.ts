import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DirectoryError, makeDirectory } from '../src/basics/directory';
import { BUILD_DIR, servicesPerTest, type Service } from './helpers/service';

/**
 * Issue 40, point 6: every refusal at start says what is wrong, in one line, and the messages are
 * what is tested: a parent that is a file (not "not writable ... mode 644"), a read-only file system
 * (not "ENOENT"), the scheme DATABASE_URL got (never its password), and a directory a file system
 * will not create (/proc/sys/x: node's recursive mkdir loops there for ever at full CPU, silently).
 */

const service = servicesPerTest();
let tmp: string;
beforeAll(() => (tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'student-info-refusals-'))));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The service as built, started with `env`: it must exit 1 (a generous wait: a loop would never end), and its one line. */
async function refused(env: Record<string, string>): Promise<string[]> {
  const s: Service = await service({ env, waitListening: false });
  expect((await s.exited).code).toBe(1);
  await new Promise<void>((resolve) => (s.proc.stderr!.closed ? resolve() : s.proc.stderr!.once('close', () => resolve())));
  expect(s.lines.filter((l) => l.msg.startsWith('listening'))).toEqual([]);
  return s.text;
}

/** The import command as built, with `env`: its exit code and what it said. */
function imported(env: Record<string, string>) {
  const r = spawnSync(process.execPath, [path.join(BUILD_DIR, 'scripts', 'import.js'), '--demo'], {
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, stderr: r.stderr.trim().split('\n') };
}

describe('a SQLITE_PATH that cannot be', () => {
  test('under a file: the file is named as a file, whoever runs it', async () => {
    const file = path.join(tmp, 'notes.txt');
    fs.writeFileSync(file, 'x');
    expect(await refused({ SQLITE_PATH: `${file}/x.db` })).toEqual([
      `error: SQLITE_PATH (${file}/x.db): ${file} is a file, not a directory`,
    ]);
    expect(await refused({ SQLITE_PATH: `${file}/data/x.db` })).toEqual([
      `error: SQLITE_PATH (${file}/data/x.db): ${file} is a file, not a directory`,
    ]);
    expect(await refused({ SQLITE_PATH: '/etc/passwd/x.db' })).toEqual([
      'error: SQLITE_PATH (/etc/passwd/x.db): /etc/passwd is a file, not a directory',
    ]);
    expect(imported({ SQLITE_PATH: '/etc/passwd/x.db' })).toEqual({
      status: 1,
      stderr: ['error: SQLITE_PATH (/etc/passwd/x.db): /etc/passwd is a file, not a directory'],
    });
  });

  test('a directory the file system will not make (/proc/sys): one line, at once, no loop', async () => {
    const why = 'cannot create the directory /proc/sys/x: the file system of /proc/sys does not take new directories (ENOENT)';
    expect(await refused({ SQLITE_PATH: '/proc/sys/x/x.db' })).toEqual([`error: SQLITE_PATH (/proc/sys/x/x.db): ${why}`]);
    expect(imported({ SQLITE_PATH: '/proc/sys/x/y/x.db' })).toEqual({
      status: 1,
      stderr: [`error: SQLITE_PATH (/proc/sys/x/y/x.db): ${why}`],
    });
    expect(() => makeDirectory('/proc/sys/x/y')).toThrow(new DirectoryError(why));
  });

  test('a SHADOW_LOG there does not stop the start (its lines say why they are not written)', async () => {
    const s = await service({ env: { SHADOW_URL: 'http://127.0.0.1:9/', SHADOW_LOG: '/proc/sys/x/differences.jsonl' } });
    expect(s.lines.find((l) => l.msg.startsWith('listening on '))).toBeDefined();
  });

  const asRoot = process.getuid?.() === 0 && process.platform === 'linux' ? describe : describe.skip;
  asRoot('on a read-only file system (a tmpfs mounted read-only: needs root and mount(8))', () => {
    let ro: string;
    beforeAll(() => {
      ro = fs.mkdtempSync(path.join(os.tmpdir(), 'student-info-ro-'));
      const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=1m', 'tmpfs', ro], { encoding: 'utf8' });
      if (mounted.status !== 0)
        throw new Error(`mount -o ro tmpfs over ${ro} was refused (${mounted.stderr.trim()}): this test needs root and mount(8)`);
    });
    afterAll(() => {
      spawnSync('umount', [ro]);
      fs.rmSync(ro, { recursive: true, force: true });
    });

    test('a folder still to make: "read-only", not ENOENT', async () => {
      expect(await refused({ SQLITE_PATH: `${ro}/data/x.db` })).toEqual([
        `error: SQLITE_PATH (${ro}/data/x.db): cannot create the directory ${ro}/data: the file system is read-only`,
      ]);
    });

    test('the folder itself: read-only too', async () => {
      expect(await refused({ SQLITE_PATH: `${ro}/x.db` })).toEqual([
        `error: SQLITE_PATH (${ro}/x.db): its directory ${ro} is not writable by this user (uid 0): the file system is read-only; the service writes the file, its -wal and -shm companions and its directory`,
      ]);
    });
  });
});

describe('DATABASE_URL with another scheme', () => {
  test('names the scheme it got, never the password', async () => {
    const lines = await refused({ DATABASE_URL: 'postgress://school:s3cret@db.example/students' });
    expect(lines).toEqual([
      'error: DATABASE_URL must be a URL such as postgres://user:password@host:5432/database (scheme postgres or postgresql), got the scheme "postgress"',
    ]);
    expect(await refused({ DATABASE_URL: 'db.example:5432/students' })).toEqual([expect.stringMatching(/, got the scheme "db\.example"$/)]);
    expect(lines.join('\n')).not.toContain('s3cret');
  });
});
