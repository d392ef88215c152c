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

const USAGE =
  'usage: npm run differential -- [--seed N] [--count M] [--config NAME]... [--index I] [--draws a,b,c] [--legacy URL] [--concurrency N] [--shrink K] [--verbose] [--rules]';

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

function parse(argv: string[]): Options | string {
  const o: Options = { seed: Date.now() % 2 ** 31, count: 1000, configs: [], index: 0, draws: null, legacy: null, concurrency: 4, shrink: 8, verbose: false, rules: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = argv[i + 1];
    const whole = () => (value !== undefined && /^\d+$/.test(value) ? (i++, Number(value)) : NaN);
    if (a === '--seed') o.seed = whole();
    else if (a === '--count') o.count = whole();
    else if (a === '--index') o.index = whole();
    else if (a === '--concurrency') o.concurrency = whole();
    else if (a === '--shrink') o.shrink = whole();
    else if (a === '--config') o.configs.push(argv[++i] ?? '');
    else if (a === '--legacy') o.legacy = argv[++i] ?? '';
    else if (a === '--draws') o.draws = /^\d+(,\d+)*$/.test(value ?? '') ? (i++, value.split(',').map(Number)) : [NaN];
    else if (a === '--verbose') o.verbose = true;
    else if (a === '--rules') o.rules = true;
    else return `unknown argument ${a}`;
  }
  if ([o.seed, o.count, o.index, o.concurrency, o.shrink].some(Number.isNaN) || o.count < 1 || o.concurrency < 1) return 'a number option takes a whole number (count and concurrency from 1)';
  if (o.draws?.some(Number.isNaN)) return '--draws takes whole numbers separated by commas';
  if (o.configs.length === 0) o.configs.push('root-tempuri-all');
  const unknown = o.configs.filter((n) => !MATRIX.some((c) => c.name === n));
  if (unknown.length > 0) return `no configuration ${unknown.join(', ')} (npm run record-legacy -- --list names them)`;
  if (o.legacy !== null && o.configs.length !== 1) return '--legacy takes the one --config the running host serves';
  return o;
}

async function main(argv: string[]): Promise<number> {
  const o = parse(argv);
  if (typeof o === 'string') {
    process.stderr.write(`${o}\n${USAGE}\n`);
    return 2;
  }
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
    const legacy = o.legacy === null ? await startLegacyHost(legacyHostDir(), config, await freePort()) : { base: o.legacy.replace(/\/$/, ''), stop: async () => undefined };
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
        out(`${formatFinding({ ...x, index: -1, signature: v.kind === 'rule' ? `covered by ${v.rule.name}` : v.kind, behind: v.kind === 'finding' ? v.behind : undefined } as Finding, again, true)}\n`);
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
