/**
 * The layers of src/ and what each may import: docs/design.md's import table is the one source
 * (read here, row by row), so the map the next engineer reads is the rule the build keeps. A file
 * may import from its own layer and from the layers its row names, never others, and no files import
 * each other in a circle. `npm run lint:layers` checks it (`npm test` runs that first);
 * test/layers.test.ts holds the table to the imports as they are (no row names a layer it does not
 * import) and the drawing to the table.
 */
const fs = require('node:fs');
const path = require('node:path');

/** `| \`src/store/\` | config, contract, basics |` rows: the layer, its folder's pattern, what it may import. */
function layersOfDesignMd() {
  const text = fs.readFileSync(path.join(__dirname, 'docs', 'design.md'), 'utf8');
  const rows = [...text.matchAll(/^\| `src\/(main\.ts|[a-z]+\/)` \| ([^|]+) \|$/gm)];
  if (rows.length === 0) throw new Error('docs/design.md: no import table rows (| `src/<layer>/` | <layers> |)');
  return rows.map(([, folder, imports]) => {
    const name = folder === 'main.ts' ? 'main' : folder.slice(0, -1);
    const list = imports.trim() === 'nothing of the project' ? [] : imports.split(',').map((l) => l.trim());
    return { name, path: folder === 'main.ts' ? '^src/main\\.ts$' : `^src/${folder}`, imports: list };
  });
}

const LAYERS = layersOfDesignMd();
const pathOf = (name) => {
  const layer = LAYERS.find((l) => l.name === name);
  if (layer === undefined) throw new Error(`docs/design.md: the import table names a layer it has no row for: ${name}`);
  return layer.path;
};

const anyLayer = LAYERS.map(({ path }) => `(?:${path})`).join('|');

const outsideItsRow = LAYERS.flatMap(({ name, path, imports }) => {
  const others = LAYERS.filter((l) => l.name !== name && !imports.includes(l.name));
  imports.forEach(pathOf);
  return others.length === 0
    ? []
    : [
        {
          name: `${name}-imports-only-its-row`,
          comment: `${name} may import only from ${imports.join(', ') || 'nothing of the project'} and itself (docs/design.md's import table)`,
          severity: 'error',
          from: { path },
          to: { path: others.map((l) => `(?:${l.path})`).join('|') },
        },
      ];
});

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...outsideItsRow,
    {
      name: 'no-circular',
      comment: 'files that import each other in a loop belong in one file, or need the shared part moved below both',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'in-a-layer',
      comment: 'every file of src/ stands in one of the layer folders (or is src/main.ts), so its folder says what it may import',
      severity: 'error',
      from: {},
      to: { path: '^src/', pathNot: anyLayer },
    },
    {
      name: 'in-a-layer-too',
      comment: 'a file of src/ outside the layer folders that imports anything',
      severity: 'error',
      from: { path: '^src/', pathNot: anyLayer },
      to: {},
    },
    {
      name: 'src-stays-in-src',
      comment: 'the service never imports scripts or tests',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(?:scripts|test)/' },
    },
    {
      name: 'no-unresolvable',
      severity: 'error',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // Type-only imports count: a layer that names an upper layer's type depends on it all the same.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(?:dist|\\.dev-build)/' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
