import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The layer check (.dependency-cruiser.cjs, `npm run lint:layers`, its rules read from docs/design.md's
 * import table) passes on src/ as it is, and fails on a copy of src/ given an upward import, a circle,
 * a file outside the layer folders, or a table that leaves out an import: so a pass means something.
 * The table is the import graph as it is, row for row, and the drawing above it is the table's.
 */
const ROOT = path.join(__dirname, '..');
const CLI = path.join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

function cruise(cwd: string, outputType = 'err') {
  return spawnSync(process.execPath, [CLI, 'src', '--config', '.dependency-cruiser.cjs', '--output-type', outputType], {
    cwd,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
}

const layerOf = (file: string): string | null => {
  const m = /^src\/(main\.ts|[^/]+)\//.exec(file) ?? /^src\/(main\.ts)$/.exec(file);
  return m === null ? null : m[1] === 'main.ts' ? 'main' : m[1];
};

/** docs/design.md's import table: each layer and the layers its row names. */
function designTable(): Map<string, Set<string>> {
  const text = fs.readFileSync(path.join(ROOT, 'docs', 'design.md'), 'utf8');
  const rows = [...text.matchAll(/^\| `src\/(main\.ts|[a-z]+\/)` \| ([^|]+) \|$/gm)];
  return new Map(
    rows.map(([, folder, imports]) => [
      folder === 'main.ts' ? 'main' : folder.slice(0, -1),
      new Set(imports.trim() === 'nothing of the project' ? [] : imports.split(',').map((l) => l.trim())),
    ]),
  );
}

let copy: string;
beforeAll(() => {
  copy = fs.mkdtempSync(path.join(os.tmpdir(), 'layers-'));
  fs.cpSync(path.join(ROOT, 'src'), path.join(copy, 'src'), { recursive: true });
  for (const file of ['.dependency-cruiser.cjs', 'tsconfig.json', 'package.json'])
    fs.copyFileSync(path.join(ROOT, file), path.join(copy, file));
  fs.mkdirSync(path.join(copy, 'docs'));
  fs.copyFileSync(path.join(ROOT, 'docs', 'design.md'), path.join(copy, 'docs', 'design.md'));
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'), 'dir');
});
afterAll(() => fs.rmSync(copy, { recursive: true, force: true }));

/** The check of src/ as it is, once, in JSON (the graph the table is held to, and the violations found). */
let asItIs: ReturnType<typeof cruise> | undefined;
const checked = () => (asItIs ??= cruise(ROOT, 'json'));

test('src/ keeps its layers: the check passes', () => {
  const run = checked();
  expect(run.stderr).toBe('');
  expect((JSON.parse(run.stdout) as { summary: { violations: unknown[] } }).summary.violations).toEqual([]);
  expect(run.status).toBe(0);
}, 60_000);

test('an upward import, a circle and a file outside the layers each fail the check, by name', () => {
  // The logger (basics) reaching up for the configuration.
  fs.appendFileSync(path.join(copy, 'src/basics/log.ts'), "\nimport type { Config } from '../config';\nexport type Up = Config;\n");
  // Two store files that import each other.
  fs.writeFileSync(path.join(copy, 'src/store/ping.ts'), "import { pong } from './pong';\nexport const ping = (): number => pong() + 1;\n");
  fs.writeFileSync(path.join(copy, 'src/store/pong.ts'), "import { ping } from './ping';\nexport const pong = (): number => ping() - 1;\n");
  fs.appendFileSync(path.join(copy, 'src/store/store.ts'), "\nexport { ping } from './ping';\n");
  // A folder that is no layer.
  fs.mkdirSync(path.join(copy, 'src/misc'));
  fs.writeFileSync(
    path.join(copy, 'src/misc/util.ts'),
    "import { escapeText } from '../basics/escape';\nexport const two = escapeText('2');\n",
  );
  fs.appendFileSync(path.join(copy, 'src/main.ts'), "\nimport { two } from './misc/util';\nvoid two;\n");

  const run = cruise(copy);
  const out = run.stdout + run.stderr;
  expect(run.status).not.toBe(0);
  expect(out).toMatch(/basics-imports-only-its-row: src\/basics\/log\.ts → src\/config\/index\.ts/);
  expect(out).toMatch(/no-circular: src\/store\/p[io]ng\.ts → /);
  expect(out).toMatch(/in-a-layer: src\/main\.ts → src\/misc\/util\.ts/);
  expect(out).toMatch(/in-a-layer-too: src\/misc\/util\.ts → src\/basics\/escape\.ts/);
}, 60_000);

test('a row of docs/design.md that leaves out a layer its files import fails the check, by name', () => {
  const design = path.join(copy, 'docs', 'design.md');
  const text = fs.readFileSync(design, 'utf8');
  fs.writeFileSync(design, text.replace('| `src/transport/` | config, contract, basics |', '| `src/transport/` | config, basics |'));
  try {
    const run = cruise(copy);
    expect(run.status).not.toBe(0);
    expect(run.stdout + run.stderr).toMatch(/transport-imports-only-its-row: src\/transport\/\S+ → src\/contract\//);
  } finally {
    fs.writeFileSync(design, text);
  }
}, 60_000);

test("docs/design.md's import table is the import graph of src/, row for row, and its drawing the table's", () => {
  const run = checked();
  const modules = (JSON.parse(run.stdout) as { modules: { source: string; dependencies: { resolved: string }[] }[] }).modules;
  const graph = new Map<string, Set<string>>();
  for (const m of modules) {
    const from = layerOf(m.source);
    if (from === null) continue;
    if (!graph.has(from)) graph.set(from, new Set());
    for (const d of m.dependencies) {
      const to = layerOf(d.resolved);
      if (to !== null && to !== from) graph.get(from)!.add(to);
    }
  }
  const table = designTable();
  const sorted = (m: Map<string, Set<string>>) => Object.fromEntries([...m].map(([k, v]) => [k, [...v].sort()]).sort());
  expect(sorted(table)).toEqual(sorted(graph));

  // The drawing: an arrow for each import the others do not already imply (the table's transitive reduction).
  const reaches = (from: string, seen = new Set<string>()): Set<string> => {
    for (const to of table.get(from) ?? []) if (!seen.has(to)) reaches(to, seen.add(to));
    return seen;
  };
  const reduced = [...table].flatMap(([from, tos]) =>
    [...tos].filter((to) => ![...tos].some((other) => other !== to && reaches(other).has(to))).map((to) => `${from} --> ${to}`),
  );
  const mermaid = /```mermaid\n([\s\S]*?)```/.exec(fs.readFileSync(path.join(ROOT, 'docs', 'design.md'), 'utf8'))![1];
  const drawn = [...mermaid.matchAll(/^\s*(\w+)(?:\["[^"]*"\])? --> (\w+)/gm)].map(([, from, to]) => `${from} --> ${to}`);
  expect(drawn.sort()).toEqual(reduced.sort());
}, 60_000);
