import fs from 'node:fs';
import path from 'node:path';
import { CHECKED_WSDL_FILE } from '../../src/bindings/soap/node-soap';
import { BUILD_DIR, PROJECT_ROOT } from './service';

export default function globalTeardown(): void {
  fs.rmSync(BUILD_DIR, { recursive: true, force: true });
  fs.rmSync(path.join(PROJECT_ROOT, CHECKED_WSDL_FILE), { force: true });
}
