import * as vega from 'vega';
import * as vl from 'vega-lite';

export interface ChartRow {
  workload: string;
  target: string;
  /** CPU µs per request. */
  us: number;
}

/**
 * CPU time per request per workload and target, as a Vega-Lite spec rendered headless to SVG (no
 * browser, no canvas: vega's SVG renderer with estimated text widths). A log scale, since a
 * 5,000-student roster costs hundreds of times what a token does.
 */
export async function renderChart(rows: readonly ChartRow[], title: string): Promise<string> {
  // One x for both layers, so they share one scale. Not stacked: a stacked bar starts at zero, which
  // a log scale cannot hold (with it in the domain every bar was drawn zero wide). A bar starts at
  // the domain's low end, so that is set below every figure (10 µs) for the smallest to show.
  const x = { field: 'us', type: 'quantitative', scale: { type: 'log', domainMin: 10 }, stack: null } as const;
  const spec: vl.TopLevelSpec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title,
    data: { values: rows as ChartRow[] },
    facet: {
      row: { field: 'workload', type: 'nominal', sort: null, header: { labelAngle: 0, labelAlign: 'left', labelLimit: 400, title: null } },
    },
    spec: {
      width: 420,
      layer: [
        {
          mark: 'bar',
          encoding: {
            y: { field: 'target', type: 'nominal', sort: null, axis: null },
            x: { ...x, title: 'CPU µs per request (log scale; shorter is better)' },
            color: { field: 'target', type: 'nominal', sort: null, title: null },
          },
        },
        {
          mark: { type: 'text', align: 'left', dx: 3 },
          encoding: {
            y: { field: 'target', type: 'nominal', sort: null },
            x,
            text: { field: 'us', type: 'quantitative', format: ',.0f' },
          },
        },
      ],
    },
    config: { legend: { orient: 'top', labelLimit: 300, columns: 2 } },
  };
  const view = new vega.View(vega.parse(vl.compile(spec).spec), { renderer: 'none' });
  return view.toSVG();
}
