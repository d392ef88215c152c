import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { buildText } from '../src/basics/build-info';
import { maskText } from '../src/basics/mask';
import { BUILD_DIR, PROJECT_ROOT, request, servicesPerTest } from './helpers/service';

/**
 * Issue 40, point 4: which build is running is said where an operator looks: the start line,
 * /metrics (asmx_build_info, Prometheus's convention of a gauge at 1 whose labels say the build) and
 * the console. The tests' build is made by scripts/build.js in this checkout, so it knows its
 * commit; test/operator-commands.test.ts builds a copy outside any git checkout (commit unknown).
 */

const service = servicesPerTest();
const { version } = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string };
const git = (...args: string[]) => spawnSync('git', ['-C', PROJECT_ROOT, ...args], { encoding: 'utf8' }).stdout.trim();
/** What the build recorded: HEAD, `-dirty` when tracked files differ from it (git describe's rule). */
const commit = () => `${git('rev-parse', 'HEAD')}${git('status', '--porcelain', '--untracked-files=no') === '' ? '' : '-dirty'}`;
/** How the start line and the console say it: the whole hash (a log line masks a short one with seven digits in a row as a phone). */
const said = () => `${version}, commit ${commit().replace(/-dirty$/, ', with changes not committed')}`;

test('the build records the version and the commit it was made from (dist/build-info.json)', () => {
  expect(git('rev-parse', 'HEAD')).toMatch(/^[0-9a-f]{40}$/);
  const recorded = JSON.parse(fs.readFileSync(path.join(BUILD_DIR, 'build-info.json'), 'utf8'));
  expect(recorded).toEqual({ version, commit: commit() });
  expect(buildText(recorded)).toBe(said());
  expect(buildText({ version: '2.1.0', commit: null })).toBe('2.1.0, commit unknown');
  expect(buildText({ version: '2.1.0', commit: `${'3f2a9c1d'.repeat(5)}-dirty` })).toBe(
    `2.1.0, commit ${'3f2a9c1d'.repeat(5)}, with changes not committed`,
  );
  // A hash with seven digits in a row is never taken for a phone in a log line (a 12-character one was).
  for (const commit of ['c5b8242545b2e0f4d1a7c3b9e8f6a5d4c3b2a190', 'c5b8242545b2e0f4d1a7c3b9e8f6a5d4c3b2a190-dirty']) {
    const line = `listening on 0.0.0.0:8080; version ${buildText({ version: '1.0.0', commit })}; open ...`;
    expect(maskText(line)).toBe(line);
  }
});

describe.each([
  ['one process', '1'],
  ['WORKERS=2', '2'],
])('the service as built, %s', (_name, workers) => {
  test('says its version and commit in the start line, /metrics (asmx_build_info, one series at 1) and the console', async () => {
    const s = await service({ env: { WORKERS: workers } });
    const start = s.lines.find((l) => l.msg.startsWith('listening on '))!.msg;
    expect(start).toMatch(
      new RegExp(`^listening on 127\\.0\\.0\\.1:\\d+(?: in 2 worker processes)?; version ${said().replace(/[.]/g, '\\.')}; open `),
    );
    const metrics = (await request(s.adminPort, '/metrics')).body;
    expect(metrics.split('\n').filter((l) => l.startsWith('asmx_build_info'))).toEqual([
      `asmx_build_info{version="${version}",commit="${commit()}",node="${process.version}"} 1`,
    ]);
    expect(metrics).toContain('# TYPE asmx_build_info gauge');
    const page = await request(s.adminPort, '/console');
    expect(page.body).toContain(`<span id="build">${said()}</span>`);
  });
});
