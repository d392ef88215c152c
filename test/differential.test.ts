import { execFile } from 'node:child_process';
import path from 'node:path';
import { freePort } from '../scripts/free-port';
import { MONO_OWN } from '../scripts/legacy/accepted-generated';
import { requestBytes } from '../scripts/legacy/ask';
import { legacyHostDir, startLegacyHost } from '../scripts/legacy/host';
import { envOf, MATRIX } from '../scripts/legacy/matrix';
import { fresh, replay, shrink } from '../scripts/differential/draws';
import { type Generated, generate } from '../scripts/differential/generate';
import { NEW_FINDINGS, OPEN_RULES } from '../scripts/differential/open-rules';
import { formatFinding, formatReport } from '../scripts/differential/report';
import { featureOf } from '../scripts/differential/rules';
import { runDifferential } from '../scripts/differential/run';
import { startOurs } from '../scripts/differential/service';
import { BUILD_DIR, PROJECT_ROOT } from './helpers/service';

/**
 * The differential run (scripts/differential/, `npm run differential`): requests generated from a
 * seed, each put to the legacy ASMX host (Mono, scripts/legacy-host/) and to our service built from
 * this tree with the same data set and site configuration, and every difference put down to a
 * written rule (Mono's own, scripts/legacy/accepted-generated.ts; or, for now, one being fixed on
 * another branch or a new finding, scripts/differential/open-rules.ts) or failing the run.
 * Needs mono-devel for the run itself (skipped without it, unless REQUIRE_LEGACY_HOST=1, as in CI);
 * the generator, the shrinker and the verdict on a difference are tested without it.
 */

const SITE = { namespace: 'http://tempuri.org/', virtualDir: '' };
// The legacy host reads its CSVs with this run's build, rather than compiling .dev-build/ for it.
process.env.LEGACY_HOST_BUILD = BUILD_DIR;
const make = (seed: number, index: number) => generate(fresh(seed, index), SITE, `seed ${seed} index ${index}`);
const wire = (g: Generated) => requestBytes('http://h', g.c, false).toString('latin1');

describe('the generator', () => {
  test('a request is made again from its seed and index alone, and from the draws it printed', () => {
    const first = Array.from({ length: 300 }, (_, i) => make(20261127, i));
    // in another order, and each from its draws
    for (const i of [299, 17, 0, 150]) expect(wire(make(20261127, i))).toBe(wire(first[i]));
    for (const g of first.slice(0, 50)) expect(wire(generate(replay(g.made), SITE, 'again'))).toBe(wire(g));
    // another seed, other requests
    expect(Array.from({ length: 20 }, (_, i) => wire(make(7, i)))).not.toEqual(first.slice(0, 20).map(wire));
  });

  test('2,000 requests reach every binding, method, path change and feature the rules are keyed by', () => {
    const all = Array.from({ length: 2000 }, (_, i) => make(39, i));
    const features = new Set(all.flatMap((g) => g.tags.map(featureOf)));
    const keyed = [...MONO_OWN, ...OPEN_RULES, ...NEW_FINDINGS].flatMap((r) => r.features);
    for (const f of keyed) expect([f, features.has(f)]).toEqual([f, true]);
    expect(new Set(all.map((g) => g.binding))).toEqual(new Set(['soap11', 'soap12', 'get', 'post', 'page']));
    expect(new Set(all.map((g) => g.c.method))).toEqual(new Set(['GET', 'POST', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'FOO']));
    const texts = all.map(wire).join('\n');
    for (const piece of [
      'charset=utf-16',
      'charset=windows-1256',
      'charset=iso-8859-1',
      'charset=x-no-such-charset',
      'SOAPAction: "http',
      'action=',
      '<soap:Header',
      '<s:Envelope',
      '<SOAP-ENV:Envelope',
      'xsi:nil',
      '<![CDATA[',
      '%D8',
      '😀',
      '\u200f',
      '%u',
      'HTTP/1.0',
      '?wsdl',
      '?disco',
      '?op=',
    ]) {
      expect([piece, texts.includes(Buffer.from(piece, 'utf8').toString('latin1'))]).toEqual([piece, true]);
    }
    // values from empty to thousands of characters
    const lengths = all.map((g) => (g.c.bodyBase64 ?? '').length + g.c.path.length);
    expect(Math.max(...lengths)).toBeGreaterThan(6000);
    expect(all.filter((g) => g.binding === 'get' && g.c.path.endsWith('?id=')).length).toBeGreaterThan(0);
  });

  test('the shrinker keeps a request that still fails, simpler than the one it started from', async () => {
    // "fails": an HTTP GET whose query holds an escaped `<`
    const fails = (g: Generated) => g.binding === 'get' && /%3C/i.test(g.c.path);
    const start = Array.from({ length: 3000 }, (_, i) => make(5, i)).find((g) => fails(g) && g.made.length > 30)!;
    const { best } = await shrink(start.made, async (draws) => {
      const g = generate(replay(draws), SITE, 'shrunk');
      return fails(g) ? g.made : null;
    });
    const shrunk = generate(replay(best), SITE, 'shrunk');
    expect(fails(shrunk)).toBe(true);
    expect(best.length).toBeLessThan(start.made.length);
    expect(shrunk.c.path.length).toBeLessThanOrEqual(start.c.path.length);
  });
});

describe('the rules', () => {
  test("each is named once; Mono's own each give the .NET reference source, or IIS's or http.sys's documented configuration", () => {
    const names = [...MONO_OWN, ...OPEN_RULES, ...NEW_FINDINGS].map((r) => r.name);
    expect(new Set(names).size).toBe(names.length);
    for (const r of MONO_OWN) {
      expect(r.reason).not.toBe('');
      // what IIS answers before ASP.NET: its applicationHost.config; before IIS: http.sys's registry parameters (KB 820129)
      expect([r.name, r.evidence]).toEqual([r.name, expect.stringMatching(/\.cs\b|\bapplicationHost\.config\b|\bKB 820129\b/)]);
    }
  });
});

describe('a difference no rule covers', () => {
  test('fails the run, reported with how to make it again', async () => {
    // two of our own services that differ in one thing, their namespace: a "legacy host" no rule explains
    const a = await startOurs({ XML_NAMESPACE: 'http://tempuri.org/' });
    const b = await startOurs({ XML_NAMESPACE: 'urn:another' });
    try {
      const report = await runDifferential({
        hosts: { legacy: a.base, ours: b.base },
        site: SITE,
        seed: 3,
        count: 60,
        concurrency: 4,
        shrinkKinds: 1,
      });
      expect(report.findings.length).toBeGreaterThan(10);
      const text = formatReport(report, 'npm run differential -- --seed 3');
      expect(text).toMatch(/^60 generated requests \(seed 3\): \d+ agree, \d+ differ as a written rule says, \d+ differ otherwise/);
      expect(text).toMatch(/again: npm run differential -- --seed 3 --index \d+/);
      expect(text).toMatch(/shrunk \(\d+ tried\):[\s\S]*again: npm run differential -- --seed 3 --draws [\d,]+/);
      expect(text).toContain('urn:another');
    } finally {
      await a.close();
      await b.close();
    }
  });
});

const describeLegacy = process.env.TEST_LEGACY_HOST === '1' || process.env.REQUIRE_LEGACY_HOST === '1' ? describe : describe.skip;

describeLegacy('against the legacy host', () => {
  // The run CI makes: a fixed seed, and the same count each time. Longer: npm run differential -- --seed N --count M.
  test.each([
    ['root-tempuri-all', 39, 1500],
    ['vdir-noslash-netdefault', 40, 500],
  ] as const)(
    '%s: seed %d, %d generated requests, every difference written down',
    async (name, seed, count) => {
      const config = MATRIX.find((c) => c.name === name)!;
      const legacy = await startLegacyHost(legacyHostDir(), config, await freePort());
      const ours = await startOurs(envOf(config));
      try {
        const report = await runDifferential({
          hosts: { legacy: legacy.base, ours: ours.base },
          site: config,
          seed,
          count,
          concurrency: 4,
          shrinkKinds: 4,
        });
        const again = `npm run differential -- --config ${name} --seed ${seed}`;
        if (report.unsteady.length > 0) console.warn(formatReport(report, again));
        expect(report.findings.map((f) => formatFinding(f, again))).toEqual([]);
        expect(report.count).toBe(count);
        // most requests are answered alike: the run compares answers, not two hosts that refuse everything
        expect(report.agreed).toBeGreaterThan(count * 0.6);
      } finally {
        await ours.close();
        await legacy.stop();
      }
    },
    300_000,
  );
});

describe('the command, from a build', () => {
  const CLI = path.join(BUILD_DIR, 'scripts', 'differential.js');
  const run = (...args: string[]) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [CLI, ...args], { cwd: PROJECT_ROOT, encoding: 'utf8', timeout: 60000 }, (error, stdout, stderr) =>
        resolve({ status: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr }),
      );
    });

  test("--rules prints every rule, Mono's own with its reference", async () => {
    const r = await run('--rules');
    expect(r.status).toBe(0);
    for (const rule of [...MONO_OWN, ...OPEN_RULES, ...NEW_FINDINGS]) expect(r.stdout).toContain(rule.name);
    for (const rule of MONO_OWN) expect(r.stdout).toContain(rule.evidence);
  });

  test('a wrong argument, or a configuration not in the matrix, is refused with the usage', async () => {
    for (const args of [['--nonsense'], ['--config', 'no-such-configuration'], ['--count', 'x'], ['--draws', '1,x']]) {
      const r = await run(...args);
      expect([args, r.status]).toEqual([args, 2]);
      expect(r.stderr).toContain('usage: npm run differential');
    }
  });
});
