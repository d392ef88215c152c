import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { anchorsOf, brokenLinks, linksOf, markdownFiles, missingPaths, slug } from './helpers/doc-links';

const root = path.resolve(__dirname, '..');

/** Runs `fn` in a new scratch directory, removed afterwards. */
function inScratch(prefix: string, fn: (dir: string) => void): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  try {
    fn(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('documentation links', () => {
  test('every relative link and #anchor in README.md, docs/ and deploy/ resolves', () => {
    const files = markdownFiles(root);
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/sms.md']));
    expect(brokenLinks(root, files)).toEqual([]);
  });

  test('every file of the repository the README and docs name in code (`src/...`, `app/index.ts`) exists', () => {
    expect(missingPaths(root, markdownFiles(root))).toEqual([]);
  });

  test('a file named in code that does not exist is reported, a build file without its source too; placeholders are not', () => {
    inScratch('doc-paths-', (dir) => {
      fs.mkdirSync(path.join(dir, 'src', 'app'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'src', 'app', 'index.ts'), '');
      fs.writeFileSync(path.join(dir, 'src', 'main.ts'), '');
      fs.writeFileSync(
        path.join(dir, 'README.md'),
        'See `src/app/index.ts`, `app/index.ts`, `app/gone.ts`, `src/ops/log.ts`, `ops/log.ts`,\n`dist/src/main.js`, `dist/src/gone.js`, `test/*.test.ts`, `src/<layer>/`, `node_modules/x/index.js`.\n```\n`src/in/a/fence.ts`\n```\n',
      );
      expect(missingPaths(dir, ['README.md'])).toEqual([
        'README.md:1: app/gone.ts',
        'README.md:1: src/ops/log.ts',
        'README.md:1: ops/log.ts',
        'README.md:2: dist/src/gone.js',
      ]);
    });
  });

  test('docs/README.md lists every page of docs/ once, one row each, and the README links to it', () => {
    const pages = markdownFiles(root)
      .filter((f) => f.startsWith('docs/') && f !== 'docs/README.md')
      .map((f) => f.slice('docs/'.length))
      .sort();
    const index = fs.readFileSync(path.join(root, 'docs', 'README.md'), 'utf8');
    const rows = index.split('\n').filter((l) => /^\| \[/.test(l));
    const listed = rows.map((l) => /^\| \[[^\]]+\]\(([^)#]+)\) \| \S.*\|$/.exec(l)?.[1] ?? `malformed row: ${l}`);
    expect([...listed].sort()).toEqual(pages);
    expect(fs.readFileSync(path.join(root, 'README.md'), 'utf8')).toContain('](docs/README.md)');
  });

  test('docs/tests.md names every suite, and every suite CI names exists', () => {
    const suites = fs.readdirSync(path.join(root, 'test')).filter((f) => f.endsWith('.test.ts'));
    const tests = fs.readFileSync(path.join(root, 'docs', 'tests.md'), 'utf8');
    expect(suites.filter((f) => !tests.includes(`\`test/${f}\``))).toEqual([]);
    const ci = fs.readFileSync(path.join(root, '.ci', 'run'), 'utf8');
    const named = [...ci.matchAll(/test\/[\w.-]+\.test\.ts/g)].map((m) => m[0]);
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((f) => !fs.existsSync(path.join(root, f)))).toEqual([]);
  });

  test('each docs page opens with its title and a summary', () => {
    const pages = markdownFiles(root).filter((f) => f.startsWith('docs/'));
    const without = pages.filter((f) => !/^# .+\n\n\*\*Summary\.\*\* \S/.test(fs.readFileSync(path.join(root, f), 'utf8')));
    expect(without).toEqual([]);
  });

  test('headings get the anchors GitHub gives them', () => {
    expect(slug('Shadow traffic: a cut-over proved on real traffic')).toBe('shadow-traffic-a-cut-over-proved-on-real-traffic');
    expect(slug('Exempting trusted callers: `SMS_LIMIT_EXEMPT`')).toBe('exempting-trusted-callers-sms_limit_exempt');
    expect(slug('Measured: `npm run bench:stall`')).toBe('measured-npm-run-benchstall');
    expect(slug('Exactly once where it can be, never lost')).toBe('exactly-once-where-it-can-be-never-lost');
    expect(slug('The cluster (WORKERS > 1)')).toBe('the-cluster-workers--1');
    expect(slug('See [SMS](docs/sms.md) now')).toBe('see-sms-now');
    const anchors = anchorsOf('# A\n## Notes\n```\n## Not a heading\n```\n## Notes\n<a id="kept"></a>\n');
    expect([...anchors].sort()).toEqual(['a', 'kept', 'notes', 'notes-1']);
  });

  test('links in code are not links; external ones are not checked', () => {
    const text = [
      'See [x](a.md#b) and `[not](code.md)`.',
      '```',
      '[inside](fence.md)',
      '```',
      '[web](https://example.org/x) ![chart](docs/bench/bench.svg "title")',
      '[ref]: other.md',
    ].join('\n');
    expect(linksOf('f.md', text).map((l) => [l.line, l.target])).toEqual([
      [1, 'a.md#b'],
      [5, 'docs/bench/bench.svg'],
      [6, 'other.md'],
    ]);
  });

  test('a missing file, a missing anchor and a way out of the repository are each reported', () => {
    inScratch('doc-links-', (dir) => {
      fs.mkdirSync(path.join(dir, 'docs'));
      fs.writeFileSync(path.join(dir, 'docs', 'a.md'), '# Page A\n\n## Part one\n');
      fs.writeFileSync(
        path.join(dir, 'README.md'),
        '[ok](docs/a.md#part-one) [self](#readme) [gone](docs/b.md) [bad](docs/a.md#part-two) [out](../x.md)\n# Readme\n',
      );
      expect(brokenLinks(dir, ['README.md'])).toEqual([
        'README.md:1: docs/b.md: no such file',
        'README.md:1: docs/a.md#part-two: no heading or anchor #part-two there',
        'README.md:1: ../x.md: leaves the repository',
      ]);
    });
  });
});
