import path from 'node:path';

export const PROJECT_ROOT = path.join(__dirname, '..', '..');
/** Inside the project, so that the build resolves node_modules as dist/ does. */
export const BUILD_DIR = path.join(PROJECT_ROOT, '.test-build-shared');
export const MAIN = path.join(BUILD_DIR, 'src', 'main.js');
