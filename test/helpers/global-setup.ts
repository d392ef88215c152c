import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { CHECKED_WSDL_FILE } from '../../src/bindings/soap/node-soap';
import { BUILD_DIR, PROJECT_ROOT } from './service';

/** Runs node with `args`; resolves with its exit code and everything it printed. */
function run(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

/**
 * Before any suite, side by side (each is one processor's work for some seconds, and every worker
 * waits for them): the type check of src/, scripts/ and test/ (jest's ts-jest compiles each file on
 * its own and checks no types), and the process tests run the service as built (dist/ layout,
 * build-info.json included), by the project's build, once per test run. Either failing ends the run
 * with what tsc said.
 */
export default async function globalSetup(): Promise<void> {
  fs.rmSync(BUILD_DIR, { recursive: true, force: true });
  const tsc = require.resolve('typescript/bin/tsc', { paths: [PROJECT_ROOT] });
  const [types, build] = await Promise.all([
    run([tsc, '-p', path.join(PROJECT_ROOT, 'tsconfig.json'), '--noEmit']),
    run([path.join(PROJECT_ROOT, 'scripts', 'build.js'), '--out', BUILD_DIR]),
  ]);
  const failed = [
    ...(types.code === 0 ? [] : [`the type check (tsc --noEmit) failed:\n${types.output}`]),
    ...(build.code === 0 ? [] : [`the build failed:\n${build.output}`]),
  ];
  if (failed.length > 0) throw new Error(failed.join('\n'));
  // The suites that run src/ in jest's own process find the build's record of the WSDLs it checked
  // where a build's code finds it, at the root of what it runs from: each of them would otherwise load
  // node-soap and read the five WSDLs again (about 0.2 s a file, and 25 ms an app built).
  fs.copyFileSync(path.join(BUILD_DIR, CHECKED_WSDL_FILE), path.join(PROJECT_ROOT, CHECKED_WSDL_FILE));
}
