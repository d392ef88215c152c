import fs from 'node:fs';
import path from 'node:path';
import { metricsOf } from './helpers/promql';
import { PROJECT_ROOT, request, startService } from './helpers/service';

/**
 * deploy/grafana's dashboard, checked as far as this machine can without a Grafana: valid JSON of
 * the schema version the docs name, panels with unique ids laid out on Grafana's 24-column grid
 * without overlapping, every query PromQL of the kind the dashboard uses and reading only metrics a
 * running service exports, and the datasource a template variable so that it imports anywhere.
 */
const FILE = path.join(PROJECT_ROOT, 'deploy', 'grafana', 'student-info-service.json');

interface Target {
  refId: string;
  expr: string;
  datasource: { type: string; uid: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  datasource?: { type: string; uid: string };
  targets?: Target[];
}
interface Dashboard {
  schemaVersion: number;
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: Array<{ name: string; type: string; query: unknown }> };
}

const dashboard = JSON.parse(fs.readFileSync(FILE, 'utf8')) as Dashboard;
const targets = dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p, target: t })));

test('is the schema version the docs name, for the Grafana version they name', () => {
  const docs = fs.readFileSync(path.join(PROJECT_ROOT, 'docs', 'console.md'), 'utf8');
  const named = /Grafana (\d+)\.x \(dashboard\s+`schemaVersion` (\d+)\)/.exec(docs);
  expect(named).not.toBeNull();
  expect(dashboard.schemaVersion).toBe(Number(named![2]));
  expect(named![1]).toBe('11');
  expect(dashboard.uid).toMatch(/^[a-zA-Z0-9_-]{1,40}$/);
});

test('panels have unique ids and sit on the 24-column grid without overlapping', () => {
  const ids = dashboard.panels.map((p) => p.id);
  expect(new Set(ids).size).toBe(ids.length);
  for (const { gridPos: g, title } of dashboard.panels) {
    expect([title, Number.isInteger(g.x) && Number.isInteger(g.y) && Number.isInteger(g.w) && Number.isInteger(g.h)]).toEqual([
      title,
      true,
    ]);
    expect([title, g.x >= 0 && g.y >= 0 && g.w >= 1 && g.h >= 1 && g.x + g.w <= 24]).toEqual([title, true]);
  }
  const overlap = (a: Panel['gridPos'], b: Panel['gridPos']) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
  for (const [i, a] of dashboard.panels.entries())
    for (const b of dashboard.panels.slice(i + 1))
      expect([a.title, b.title, overlap(a.gridPos, b.gridPos)]).toEqual([a.title, b.title, false]);
});

test('the datasource is a template variable, used by every panel and query', () => {
  const variable = dashboard.templating.list.find((v) => v.type === 'datasource');
  expect(variable).toMatchObject({ name: 'datasource', query: 'prometheus' });
  // biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's own variable reference, not a template string
  const uid = '${datasource}';
  for (const p of dashboard.panels.filter((q) => q.type !== 'row'))
    expect([p.title, p.datasource]).toEqual([p.title, { type: 'prometheus', uid }]);
  for (const { panel, target } of targets) expect([panel.title, target.datasource]).toEqual([panel.title, { type: 'prometheus', uid }]);
  const refIds = (p: Panel) => (p.targets ?? []).map((t) => t.refId);
  for (const p of dashboard.panels) expect(new Set(refIds(p)).size).toBe(refIds(p).length);
});

test('the PromQL reader refuses what is not PromQL', () => {
  expect(metricsOf('sum by (operation) (rate(asmx_requests_total{status=~"5.."}[$__rate_interval]))')).toEqual(['asmx_requests_total']);
  expect(() => metricsOf('sum(rate(asmx_requests_total[5 minutes]))')).toThrow(/bad range/);
  expect(() => metricsOf('sum(rate(asmx_requests_total{status=5}[5m]))')).toThrow(/quoted value/);
  expect(() => metricsOf('sum(rate(asmx_requests_total[5m])')).toThrow(/^expected /);
  expect(metricsOf('x unless y offset $__range')).toEqual(['x', 'y']);
  expect(() => metricsOf('x unless y offset 15 minutes')).toThrow(/^left over /);
});

describe('against a running service', () => {
  test("every query parses and reads only metrics the service's /metrics exports", async () => {
    const s = await startService({ env: { SHADOW_URL: 'http://127.0.0.1:9/' } });
    try {
      const metrics = await request(s.adminPort, '/metrics');
      expect(metrics.status).toBe(200);
      const exported = new Set<string>();
      for (const m of metrics.body.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
        exported.add(m[1]);
        if (m[2] === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) exported.add(m[1] + suffix);
      }
      expect(exported.has('asmx_requests_total')).toBe(true);
      const used = new Set<string>();
      for (const { panel, target } of targets) for (const name of metricsOf(target.expr)) used.add(`${name} (${panel.title})`);
      const unknown = [...used].filter((u) => !exported.has(u.split(' ')[0]));
      expect(unknown).toEqual([]);
      expect(used.size).toBeGreaterThan(10);
      // The instance variable's query reads an exported metric too.
      const instance = dashboard.templating.list.find((v) => v.name === 'instance')!;
      expect(exported.has(/label_values\((\w+),/.exec(JSON.stringify(instance.query))![1])).toBe(true);
    } finally {
      s.kill();
      await s.exited;
      fs.rmSync(s.dir, { recursive: true, force: true });
    }
  });
});
