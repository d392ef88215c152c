import { requestBytes } from '../legacy/ask';
import type { Answer } from '../../src/shadow/compare';
import { NEW_FINDINGS, OPEN_RULES } from './open-rules';
import type { Exchange, Finding, Report } from './run';

/** A differential run's report as text: counts, each rule with its count and smallest example, each finding with how to make it again. */

/** Draws as `--draws` takes them: the trailing zeros are what a replay draws past the end anyway. */
export function drawsText(made: readonly number[]): string {
  let n = made.length;
  while (n > 1 && made[n - 1] === 0) n--;
  return made.slice(0, n).join(',');
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…(${s.length} chars)` : s);

/** The request as it went to our service, its bytes as a JSON string (Host as the placeholder). */
export function requestText(x: Pick<Exchange, 'g'>, n = 700): string {
  return clip(JSON.stringify(requestBytes('http://{HOST}', x.g.c, false).toString('latin1')), n);
}

const answerLine = (a: Answer, n: number) =>
  a.error ? `no answer (${a.error})` : `${a.status} ${a.headers['content-type'] ?? '(no type)'} ${clip(JSON.stringify(a.body), n)}`;

function exchangeLines(x: Exchange, verbose: boolean): string[] {
  const n = verbose ? 4000 : 300;
  return [
    `    request: ${requestText(x, verbose ? 4000 : 700)}`,
    ...(x.g.c.legacyPath ? [`    (the legacy host asked ${JSON.stringify(x.g.c.legacyPath)})`] : []),
    `    legacy: ${answerLine(x.legacy, n)}`,
    `    ours:   ${answerLine(x.ours, n)}`,
    ...x.diffs.map((d) => `    ${d.detail}`),
  ];
}

export function formatFinding(f: Finding, again: string, verbose = false): string {
  const lines = [
    `✗ index ${f.index} — ${f.signature}${f.behind ? ` (found without the feature of ${f.behind})` : ''}`,
    ...exchangeLines(f, verbose),
  ];
  lines.push(f.behind ? `    again: ${again} --draws ${drawsText(f.g.made)}` : `    again: ${again} --index ${f.index}`);
  if (f.shrunk) {
    lines.push(
      `  shrunk (${f.shrunk.tried} tried):`,
      ...exchangeLines(f.shrunk, verbose),
      `    again: ${again} --draws ${drawsText(f.shrunk.g.made)}`,
    );
  }
  return lines.join('\n');
}

export function formatReport(report: Report, again: string, verbose = false): string {
  const ruled = [...report.byRule.values()].reduce((s, r) => s + r.count, 0);
  const out = [
    `${report.count} generated requests (seed ${report.seed}): ${report.agreed} agree, ${ruled} differ as a written rule says, ${report.findings.length} differ otherwise` +
      `${report.unsteady.length > 0 ? ` (${report.unsteady.length} more did once, not again)` : ''}; ${report.asked} asked of each host`,
  ];
  const order = { new: 0, open: 1, mono: 2 };
  const rules = [...report.byRule.values()].sort((a, b) => order[a.whose] - order[b.whose] || b.count - a.count);
  if (rules.length > 0)
    out.push('', "Differences by rule (new: found by this run, no branch yet; open: being fixed on another branch; mono: Mono's own):");
  for (const r of rules) {
    out.push(
      `  ${r.whose.padEnd(4)} ${r.rule.name.padEnd(36)} ${String(r.count).padStart(5)}   e.g. index ${r.example.index}: ${clip(r.example.diffs[0]?.detail ?? '', 160)}`,
    );
    if (verbose) out.push(...exchangeLines(r.example, false));
  }
  if (report.findings.length > 0) out.push('', 'Differences no rule covers:');
  const shown = new Set<string>();
  for (const f of report.findings) {
    if (shown.has(f.signature) && !verbose) continue;
    shown.add(f.signature);
    const more = report.findings.filter((x) => x.signature === f.signature).length;
    out.push(
      formatFinding(f, again, verbose) +
        (more > 1
          ? `\n    (${more} requests differ so: indexes ${report.findings
              .filter((x) => x.signature === f.signature)
              .slice(0, 12)
              .map((x) => x.index)
              .join(', ')}${more > 12 ? ', …' : ''})`
          : ''),
    );
  }
  // a temporary rule nothing needed may have been fixed: then it goes (a longer run may still need it)
  const idle = [...OPEN_RULES, ...NEW_FINDINGS].filter((r) => !report.byRule.has(r.name)).map((r) => r.name);
  if (idle.length > 0)
    out.push('', `Temporary rules no difference needed in this run (fixed? then delete them from open-rules.ts): ${idle.join(', ')}`);
  if (report.unsteady.length > 0) out.push('', 'Differences that did not come again when asked again (not counted as findings):');
  for (const f of report.unsteady) out.push(formatFinding(f, again, false));
  return `${out.join('\n')}\n`;
}
