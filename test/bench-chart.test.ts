import { renderChart } from '../scripts/bench/chart';

/** The published chart (docs/bench/bench.svg): each figure a bar as long as its place on the log scale. */

test('every figure is drawn as a bar, longer for a larger one, on a log scale that starts below them all', async () => {
  const rows = [
    { workload: 'GetTokenDevice, SOAP 1.1', target: 'service', us: 54 },
    { workload: 'GetTokenDevice, SOAP 1.1', target: 'ceiling', us: 540 },
    { workload: 'GetStudentSchool, 5000 students, SOAP 1.1', target: 'service', us: 5400 },
    { workload: 'GetStudentSchool, 5000 students, SOAP 1.1', target: 'ceiling', us: 54000 },
  ];
  const svg = await renderChart(rows, 'a chart');
  // A bar: its figure in its label, then its path `M x,y h WIDTH v ...`.
  const bars = new Map(
    [
      ...svg.matchAll(
        /aria-label="[^"]*: ([\d.]+); target: [^"]*" role="graphics-symbol" aria-roledescription="bar" d="M[\d.]+,[\d.]+h([\d.]+)v/g,
      ),
    ].map((m) => [Number(m[1]), Number(m[2])]),
  );
  expect([...bars.keys()].sort((a, b) => a - b)).toEqual([54, 540, 5400, 54000]);
  const width = (us: number) => bars.get(us)!;
  expect(width(54)).toBeGreaterThan(0);
  // Ten times the figure, the same step on a log scale.
  const step = width(540) - width(54);
  expect(step).toBeGreaterThan(0);
  expect(width(5400) - width(540)).toBeCloseTo(step, 1);
  expect(width(54000) - width(5400)).toBeCloseTo(step, 1);
  expect(svg).toMatch(/for a log scale with values from 10 to/);
});
