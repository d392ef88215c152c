import { escapeMarkup } from '../basics/escape';

/**
 * Charts as inline SVG written on the server: no script, no library, nothing the page loads
 * besides itself and its style sheet (the CSP allows nothing else). Presentation attributes only
 * (fill, stroke), no style attributes, so the page needs no 'unsafe-inline'.
 */
export interface Line {
  name: string;
  /** One value per bucket, oldest first; null is a gap (no data, e.g. no request to time). */
  values: ReadonlyArray<number | null>;
}

export interface ChartOptions {
  title: string;
  /** What the x axis spans, e.g. "last hour", written under it. */
  span: string;
  /** How a value is written on the y axis. */
  format?: (v: number) => string;
}

const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f', '#bcbd22'];
const W = 560;
const H = 180;
const LEFT = 56;
const RIGHT = 8;
const TOP = 22;
const BOTTOM = 22;

export const colourOf = (i: number): string => PALETTE[i % PALETTE.length];

export function lineChart(lines: readonly Line[], options: ChartOptions): string {
  const format = options.format ?? ((v: number) => String(Math.round(v * 100) / 100));
  const count = Math.max(1, ...lines.map((l) => l.values.length));
  let max = 0;
  for (const l of lines) for (const v of l.values) if (v !== null && Number.isFinite(v)) max = Math.max(max, v);
  const top = niceCeiling(max);
  const x = (i: number) => LEFT + (count === 1 ? 0 : (i * (W - LEFT - RIGHT)) / (count - 1));
  const y = (v: number) => TOP + (H - TOP - BOTTOM) * (1 - Math.min(v, top) / top);
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${escapeMarkup(options.title)}">`,
    `<title>${escapeMarkup(options.title)}</title>`,
    `<text x="${LEFT}" y="14" font-size="12" font-weight="bold" fill="#222">${escapeMarkup(options.title)}</text>`,
  ];
  for (const frac of [0, 0.5, 1]) {
    const yy = y(top * frac);
    parts.push(`<line x1="${LEFT}" x2="${W - RIGHT}" y1="${yy}" y2="${yy}" stroke="#ddd"/>`);
    parts.push(
      `<text x="${LEFT - 4}" y="${yy + 4}" font-size="10" text-anchor="end" fill="#555">${escapeMarkup(format(top * frac))}</text>`,
    );
  }
  parts.push(`<text x="${W - RIGHT}" y="${H - 6}" font-size="10" text-anchor="end" fill="#555">${escapeMarkup(options.span)} → now</text>`);
  lines.forEach((l, n) => {
    // A run of values between gaps is one polyline; a lone point is a dot.
    let run: string[] = [];
    const flush = () => {
      if (run.length === 1) {
        const [cx, cy] = run[0].split(',');
        parts.push(`<circle cx="${cx}" cy="${cy}" r="2" fill="${colourOf(n)}"/>`);
      } else if (run.length > 1) parts.push(`<polyline fill="none" stroke="${colourOf(n)}" stroke-width="1.5" points="${run.join(' ')}"/>`);
      run = [];
    };
    for (const [i, v] of l.values.entries()) {
      if (v === null || !Number.isFinite(v)) flush();
      else run.push(`${x(i).toFixed(1)},${y(v).toFixed(1)}`);
    }
    flush();
  });
  parts.push('</svg>');
  return parts.join('');
}

/** A legend for the lines of a chart, in their colours. */
export function legend(lines: readonly Line[], total?: (l: Line) => string): string {
  const items = lines.map(
    (l, i) =>
      `<li><svg width="10" height="10" aria-hidden="true"><rect width="10" height="10" fill="${colourOf(i)}"/></svg> ${escapeMarkup(l.name)}${total === undefined ? '' : ` <b>${escapeMarkup(total(l))}</b>`}</li>`,
  );
  return `<ul class="legend">${items.join('')}</ul>`;
}

/** 1, 2 or 5 times a power of ten, at least `v` (and at least 1 so that an idle chart has an axis). */
function niceCeiling(v: number): number {
  if (v <= 1) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}
