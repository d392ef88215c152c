import { execFile } from 'node:child_process';
import path from 'node:path';
import { buildCorpus } from '../scripts/legacy/corpus';
import { listening } from './helpers/app';
import { BUILD_DIR, PROJECT_ROOT } from './helpers/service';

/**
 * scripts/compare-legacy.ts, its corpus and its runner: the command line, run from
 * a build as `npm run compare-legacy` runs it, replays a recording against a live service and says
 * which cases differ.
 */

const RECORDING = 'test/fixtures/legacy/root-tempuri-all.json';

describe('the command line, from a build', () => {
  const CLI = path.join(BUILD_DIR, 'scripts', 'compare-legacy.js');
  // Not spawnSync: the service it asks answers from this process's event loop.
  const run = (...args: string[]) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [CLI, ...args], { cwd: PROJECT_ROOT, encoding: 'utf8', timeout: 60000 }, (error, stdout, stderr) =>
        resolve({ status: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr }),
      );
    });
  const served = listening();

  test('--list names the cases', async () => {
    const r = await run('--list', '--only', 'framing/http10/');
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual(
      buildCorpus()
        .filter((c) => c.name.startsWith('framing/http10/'))
        .map((c) => c.name),
    );
  });

  test('a recording replayed against the service: HTTP/1.0 and 1.1, every case agreeing, exit 0', async () => {
    // Every framing case but DELETE on the service page, which IIS answers (an accepted difference with Mono).
    const framing = ['soap', 'get-', 'post-', 'wsdl', 'empty-'].flatMap((c) => ['--only', `framing/http10/${c}`]);
    const r = await run('--from', RECORDING, served.base, ...framing, '--only', 'routing/soap11/');
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^\n\d+ cases, 0 differ\n\nHow the comparison reads the legacy host/);
    expect(Number(/(\d+) cases/.exec(r.stdout)![1])).toBeGreaterThan(40);
    expect(r.status).toBe(0);
  });

  test('a difference is reported with its case and the exit code says so', async () => {
    // Mono's help pages are its own design: the corpus test accepts these differences, the tool reports them.
    const r = await run('--from', RECORDING, served.base, '--only', 'pages/AboutUs/help-op-unknown');
    expect(r.stdout).toContain('✗ pages/AboutUs/help-op-unknown');
    expect(r.stdout).toContain('1 cases, 1 differ');
    expect(r.status).toBe(1);
  });

  test('a host that does not answer is a difference, not a hang', async () => {
    const r = await run('--from', RECORDING, 'http://127.0.0.1:9', '--only', 'framing/http10/soap11-malformed');
    expect(r.stdout).toContain('1 cases, 1 differ');
    expect(r.status).toBe(1);
  });

  test('a wrong option is refused with the usage', async () => {
    const r = await run('--nonsense');
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('usage: npm run compare-legacy');
  });
});
