import { groupDigits } from '../basics/digits';
import type { History } from './history';
import { legend, type Line, lineChart } from './svg';

/** The two views of every chart: the last hour by minute, the last day by quarter hour. */
export const WINDOWS = [
  { name: 'last hour', count: 60, step: 1, per: 'per minute' },
  { name: 'last day', count: 96, step: 15, per: 'per 15 minutes' },
] as const;

export const nameOf = (label: string | undefined) => (label === undefined || label === '' ? '(none)' : label);
export const count = groupDigits;
export const ms = (v: number) => (v >= 1000 ? `${v / 1000} s` : `${v} ms`);

/** A chart of `name` in each window, split by `by`, with a legend of each line's total. */
export function chartPair(
  h: History,
  now: number,
  name: string,
  title: string,
  by?: Parameters<History['buckets']>[4],
  filter?: Parameters<History['buckets']>[5],
): string {
  return WINDOWS.map((w) => {
    const lines = linesOf(h.buckets(name, now, w.count, w.step, by, filter));
    return figure(lines, `${title}, ${w.per}`, w.name, sumOf);
  }).join('');
}

const sumOf = (l: Line) => count(l.values.reduce<number>((a, b) => a + (b ?? 0), 0));

/** A chart in each window with a line per metric (e.g. codes accepted, sent, failed), each with its total. */
export function metricsPair(h: History, now: number, title: string, metrics: ReadonlyArray<readonly [string, string]>): string {
  return WINDOWS.map((w) => {
    const lines = metrics.map(([label, name]) => ({
      name: label,
      values: h.buckets(name, now, w.count, w.step).get('') ?? new Array<number>(w.count).fill(0),
    }));
    return figure(lines, `${title}, ${w.per}`, w.name, sumOf);
  }).join('');
}

export function linesOf(groups: Map<string, number[]>): Line[] {
  return [...groups.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([name, values]) => ({ name: nameOf(name), values }));
}

export function figure(lines: Line[], title: string, span: string, totalOf?: (l: Line) => string, format?: (v: number) => string): string {
  const body = lines.length === 0 ? '<p class="meta">nothing yet</p>' : legend(lines, totalOf);
  return `<figure>${lineChart(lines, { title, span, format })}${body}</figure>`;
}
