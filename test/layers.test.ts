import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The layer check (.dependency-cruiser.cjs, `npm run lint:layers`) passes on src/ as it is, and fails
 * on a copy of src/ given an upward import, a circle and a file outside the layer folders: so a pass
 * means something.
 */
const ROOT = path.join(__dirname, '..');
const CLI = path.join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

function cruise(cwd: string) {
  return spawnSync(process.execPath, [CLI, 'src', '--config', '.dependency-cruiser.cjs', '--output-type', 'err'], { cwd, encoding: 'utf8' });
}

let copy: string;
beforeAll(() => {
  copy = fs.mkdtempSync(path.join(os.tmpdir(), 'layers-'));
  fs.cpSync(path.join(ROOT, 'src'), path.join(copy, 'src'), { recursive: true });
  for (const file of ['.dependency-cruiser.cjs', 'tsconfig.json', 'package.json']) fs.copyFileSync(path.join(ROOT, file), path.join(copy, file));
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'), 'dir');
});
afterAll(() => fs.rmSync(copy, { recursive: true, force: true }));

test('src/ keeps its layers: the check passes', () => {
  const run = cruise(ROOT);
  expect(run.stdout + run.stderr).toContain('no dependency violations found');
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
  fs.writeFileSync(path.join(copy, 'src/misc/util.ts'), "import { escapeText } from '../basics/escape';\nexport const two = escapeText('2');\n");
  fs.appendFileSync(path.join(copy, 'src/main.ts'), "\nimport { two } from './misc/util';\nvoid two;\n");

  const run = cruise(copy);
  const out = run.stdout + run.stderr;
  expect(run.status).not.toBe(0);
  expect(out).toMatch(/basics-imports-only-below: src\/basics\/log\.ts → src\/config\/index\.ts/);
  expect(out).toMatch(/no-circular: src\/store\/p[io]ng\.ts → /);
  expect(out).toMatch(/in-a-layer: src\/main\.ts → src\/misc\/util\.ts/);
  expect(out).toMatch(/in-a-layer-too: src\/misc\/util\.ts → src\/basics\/escape\.ts/);
}, 60_000);
