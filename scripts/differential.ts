/**
 * The differential run: generated requests (scripts/differential/) put to a legacy ASMX host and to
 * our service, built from this tree with the same data set and site configuration, and every
 * difference reported with the rule that covers it, or as a finding.
 *
 *   npm run differential -- [--seed N] [--count M]      M requests (default 1000) from seed N (default: the time)
 *   [--config NAME]...       site configurations of the matrix (scripts/legacy/matrix.ts; default root-tempuri-all)
 *   [--index I]              requests from index I (with --count 1: one request made again, shown whole)
 *   [--draws a,b,c]          the request these draws make (what a shrunk finding prints)
 *   [--legacy URL]           a legacy host already running under the one --config given, instead of starting one
 *   [--concurrency N] [--shrink K] [--verbose] [--rules]
 *
 * Exit codes: 0 every difference is covered by a written rule, 1 a finding, 2 usage.
 * The rules: Mono's own in scripts/legacy/accepted-generated.ts, the temporary ones (being fixed on other
 * branches; new findings) in scripts/differential/open-rules.ts. See docs/fidelity.md, "The differential run".
 */
import '../src/basics/supported-node';
import { type CommandLine, type CommandSpec, parseCommandLine, usageError } from '../src/basics/command-line';
import { describeMonoOwn } from './legacy/accepted-generated';
import { describeAccepted } from './legacy/accepted';
import { freePort } from './free-port';
import { legacyHostDir, startLegacyHost } from './legacy/host';
import { envOf, MATRIX } from './legacy/matrix';
import { replay } from './differential/draws';
import { NEW_FINDINGS, OPEN_RULES } from './differential/open-rules';
import { formatFinding, formatReport } from './differential/report';
import { type Finding, runDifferential, runner } from './differential/run';
import { startOurs } from './differential/service';
import { runMain } from './run-main';

const COMMAND = {
  usage: [
    'npm run differential -- [--seed N] [--count M] [--config NAME]... [--index I] [--draws a,b,c] [--legacy URL] [--concurrency N] [--shrink K] [--verbose] [--rules]',
  ],
  summary: [
    'Puts generated requests to a legacy ASMX host it starts and to this service built from the tree, and',
    'fails on any difference no written rule covers (scripts/legacy/accepted-generated.ts, scripts/differential/).',
  ],
  options: {
    seed: { type: 'integer', min: 0, max: 2 ** 31 - 1, help: 'the seed (default: the time)' },
    count: { type: 'integer', min: 1, max: 10_000_000, help: 'how many requests (default 1000)' },
    config: {
      type: 'string',
      multiple: true,
      value: 'NAME',
      help: 'a site configuration of the matrix (default root-tempuri-all; repeatable)',
    },
    index: {
      type: 'integer',
      min: 0,
      max: 10_000_000,
      value: 'I',
      help: 'requests from index I (with --count 1: one request made again, shown whole)',
    },
    draws: { type: 'string', value: 'a,b,c', help: 'the request these draws make (what a shrunk finding prints)' },
    legacy: { type: 'string', value: 'URL', help: 'a legacy host already running under the one --config given, instead of starting one' },
    concurrency: { type: 'integer', min: 1, max: 64, help: 'requests at once (default 4)' },
    shrink: { type: 'integer', min: 0, max: 1000, value: 'K', help: 'kinds of difference shrunk (default 8)' },
    verbose: { type: 'boolean', help: 'every difference, not one per kind' },
    rules: { type: 'boolean', help: "print every rule, Mono's own with its reference" },
  },
  notes: ['exit codes: 0 every difference is covered by a written rule, 1 a finding, 2 usage'],
} as const satisfies CommandSpec;

interface Options {
  seed: number;
  count: number;
  configs: string[];
  index: number;
  draws: number[] | null;
  legacy: string | null;
  concurrency: number;
  shrink: number;
  verbose: boolean;
  rules: boolean;
}

function options(line: CommandLine<typeof COMMAND>): Options | string {
  const v = line.values;
  if (v.draws !== undefined && !/^\d+(,\d+)*$/.test(v.draws)) return '--draws takes whole numbers separated by commas';
  const o: Options = {
    seed: v.seed ?? Date.now() % 2 ** 31,
    count: v.count ?? 1000,
    configs: v.config?.length ? [...v.config] : ['root-tempuri-all'],
    index: v.index ?? 0,
    draws: v.draws === undefined ? null : v.draws.split(',').map(Number),
    legacy: v.legacy ?? null,
    concurrency: v.concurrency ?? 4,
    shrink: v.shrink ?? 8,
    verbose: v.verbose === true,
    rules: v.rules === true,
  };
  const unknown = o.configs.filter((n) => !MATRIX.some((c) => c.name === n));
  if (unknown.length > 0) return `no configuration ${unknown.join(', ')} (npm run record-legacy -- --list names them)`;
  if (o.legacy !== null && o.configs.length !== 1) return '--legacy takes the one --config the running host serves';
  return o;
}

async function main(argv: string[]): Promise<number> {
  const line = parseCommandLine(COMMAND, argv);
  if (typeof line === 'number') return line;
  const o = options(line);
  if (typeof o === 'string') return usageError(COMMAND, o);
  const out = (s: string) => process.stdout.write(s);
  if (o.rules) {
    out(describeMonoOwn());
    const list = (rules: typeof OPEN_RULES) => rules.map((r) => `  - ${r.name} [${r.features.join(', ')}]: ${r.reason}`).join('\n');
    out(`\nOpen rules, being fixed on other branches (scripts/differential/open-rules.ts, temporary):\n${list(OPEN_RULES)}\n`);
    out(`\nNew findings, no branch yet (scripts/differential/open-rules.ts, temporary):\n${list(NEW_FINDINGS)}\n`);
    out(`\n${describeAccepted()}`);
    return 0;
  }
  let findings = 0;
  for (const name of o.configs) {
    const config = MATRIX.find((c) => c.name === name)!;
    const site = { namespace: config.namespace, virtualDir: config.virtualDir };
    const legacy =
      o.legacy === null
        ? await startLegacyHost(legacyHostDir(), config, await freePort())
        : { base: o.legacy.replace(/\/$/, ''), stop: async () => undefined };
    const ours = await startOurs(envOf(config));
    const again = `npm run differential -- --config ${name} --seed ${o.seed}${o.legacy ? ` --legacy ${o.legacy}` : ''}`;
    const started = Date.now();
    try {
      out(`== ${name}: seed ${o.seed}, legacy ${legacy.base}, ours ${ours.base}\n`);
      const hosts = { legacy: legacy.base, ours: ours.base };
      if (o.draws !== null) {
        const r = runner({ hosts, site });
        const x = await r.exchange(r.make(replay(o.draws), 'the draws given'));
        const v = await r.judge(x);
        out(
          `${formatFinding({ ...x, index: -1, signature: v.kind === 'rule' ? `covered by ${v.rule.name}` : v.kind, behind: v.kind === 'finding' ? v.behind : undefined } as Finding, again, true)}\n`,
        );
        findings += v.kind === 'finding' ? 1 : 0;
        continue;
      }
      const report = await runDifferential({
        hosts,
        site,
        seed: o.seed,
        count: o.count,
        first: o.index,
        concurrency: o.concurrency,
        shrinkKinds: o.shrink,
        onProgress: (n) => n % 250 === 0 && process.stderr.write(`${n} / ${o.count}\n`),
      });
      out(formatReport(report, again, o.verbose || o.count === 1));
      out(`(${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
      findings += report.findings.length;
    } finally {
      await ours.close();
      await legacy.stop();
    }
  }
  return findings === 0 ? 0 : 1;
}

runMain(main);
