/**
 * The run's CPU table and verdicts as markdown (bench.md beside bench.json), for docs/performance.md:
 * the page quotes the run behind the chart, so it is written from that run, not copied by hand.
 */
import type { CpuRow } from './cpu-table';
import type { Verdict } from './report';
import { coverage, type ShadowRow } from './shadow';

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

export function cpuMarkdown(cpu: readonly CpuRow[], shadow: readonly ShadowRow[], verdicts: readonly Verdict[], title: string): string {
  const stores = [...new Set(cpu.filter((r) => r.kind === 'service').map((r) => r.target))];
  const lines = [
    '# The benchmark run behind the chart: CPU per request',
    '',
    `**Summary.** Written by \`npm run bench\` (${title}): each server's CPU µs per request, paced, and issue 42's targets judged on it. What it means: [performance.md](../performance.md).`,
    '',
    `CPU µs per request, paced (${title}):`,
    '',
    `| workload | ${stores.join(' | ')} | ceiling | node-soap | ${stores
      .map((s) => s.replace(/^service, /, '').replace(/, 1 worker$/, ''))
      .map((s) => `${s} x ceiling | ${s} x node-soap`)
      .join(' | ')} |`,
    `| --- | ${[...stores, 'c', 'n'].map(() => '---:').join(' | ')} | ${stores.map(() => '---: | ---:').join(' | ')} |`,
  ];
  for (const workload of [...new Set(cpu.map((r) => r.workload))]) {
    const of = (pick: (r: CpuRow) => boolean) => cpu.find((r) => r.workload === workload && pick(r));
    const ceiling = of((r) => r.kind === 'ceiling');
    const nodeSoap = of((r) => r.kind === 'node-soap');
    const cells = stores.map((s) => of((r) => r.target === s));
    const ratio = (a: CpuRow | undefined, b: CpuRow | undefined) => (a && b ? `${fmt(a.us / b.us, 2)}x` : '-');
    lines.push(
      `| ${cpu.find((r) => r.workload === workload)!.title} | ${cells.map((c) => (c ? fmt(c.us) : '-')).join(' | ')} | ${ceiling ? fmt(ceiling.us) : '-'} | ${nodeSoap ? fmt(nodeSoap.us) : '-'} | ${cells.map((c) => `${ratio(c, ceiling)} | ${ratio(c, nodeSoap)}`).join(' | ')} |`,
    );
  }
  const paced = shadow.filter((r) => r.off.cpuUs > 0);
  if (paced.length > 0) {
    lines.push(
      '',
      'Shadowing off / on, CPU µs per request (the service and its copier), paced:',
      '',
      '| workload | load | off | on (service + copier) | on / off | compared |',
      '| --- | --- | ---: | ---: | ---: | ---: |',
    );
    for (const r of paced) {
      const load = r.load === 'saturated' ? 'saturated' : `${r.load * 100}% (${fmt(r.rate ?? 0)} req/s)`;
      lines.push(
        `| ${r.title} | ${load} | ${fmt(r.off.cpuUs)} | ${fmt(r.on.cpuUs)} (${fmt(r.on.ownUs)} + ${fmt(r.on.cpuUs - r.on.ownUs)}) | ${fmt((100 * r.on.cpuUs) / r.off.cpuUs)}% | ${fmt(100 * coverage(r), 2)}% |`,
      );
    }
  }
  lines.push('', '| target | measured | |', '| --- | --- | --- |');
  for (const v of verdicts) lines.push(`| ${v.target} | ${v.measured} | ${v.ok ? 'holds' : '**misses**'} |`);
  return `${lines.join('\n')}\n`;
}
