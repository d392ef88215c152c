/**
 * The layers of src/, from the ground up: a file may import from its own layer and the layers below
 * it, never above, and no files import each other in a circle. `npm run lint:layers` checks it (and
 * `npm test` runs that first). docs/design.md draws the layers.
 */
const LAYERS = [
  ['basics', '^src/basics/'],
  ['contract', '^src/contract/'],
  ['config', '^src/config/'],
  ['transport', '^src/transport/'],
  ['store', '^src/store/'],
  ['sms', '^src/sms/'],
  ['services', '^src/services/'],
  ['bindings', '^src/bindings/'],
  ['pages', '^src/pages/'],
  ['shadow', '^src/shadow/'],
  ['app', '^src/app/'],
  ['console', '^src/console/'],
  ['process', '^src/process/'],
  ['main', '^src/main\\.ts$'],
];

const anyLayer = LAYERS.map(([, path]) => `(?:${path})`).join('|');

const upward = LAYERS.slice(0, -1).map(([name, path], i) => ({
  name: `${name}-imports-only-below`,
  comment: `${name} may import only from ${LAYERS.slice(0, i).map(([below]) => below).join(', ') || 'itself'} and itself`,
  severity: 'error',
  from: { path },
  to: { path: LAYERS.slice(i + 1).map(([, above]) => `(?:${above})`).join('|') },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...upward,
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
