import { execFileSync } from 'child_process';
import fs from 'fs';
import { BUILD_DIR, PROJECT_ROOT } from './service';

/** The process tests run the service as built (dist/ layout), compiled once per test run. */
export default function globalSetup(): void {
  fs.rmSync(BUILD_DIR, { recursive: true, force: true });
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', BUILD_DIR], { cwd: PROJECT_ROOT });
}
