import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { BUILD_DIR, PROJECT_ROOT } from './service';

/** The process tests run the service as built (dist/ layout, build-info.json included), by the project's build, once per test run. */
export default function globalSetup(): void {
  fs.rmSync(BUILD_DIR, { recursive: true, force: true });
  execFileSync(process.execPath, [path.join(PROJECT_ROOT, 'scripts', 'build.js'), '--out', BUILD_DIR], { cwd: PROJECT_ROOT });
}
