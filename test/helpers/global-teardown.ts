import fs from 'node:fs';
import { BUILD_DIR } from './service';

export default function globalTeardown(): void {
  fs.rmSync(BUILD_DIR, { recursive: true, force: true });
}
