#!/usr/bin/env node

/**
 * The Node.js lines the service runs on, and the one-line refusal of any other. Run by `npm ci`
 * (preinstall) and by the build, before anything native is loaded: better-sqlite3 13 needs Node 22,
 * and an end-of-life Node fails a school's security review. Plain JavaScript with no dependency, so
 * it runs on any Node. package.json's `engines`, `.nvmrc` and the README say the same (test/runtime.test.ts).
 * Each entry point of the build loads it first too (src/basics/supported-node.ts): `node dist/src/main.js`,
 * as a supervisor runs it, and every command of dist/scripts/.
 */
const fs = require('node:fs');
const path = require('node:path');

const SUPPORTED = [22, 24, 26];
const NEWEST = 24; // the line .nvmrc names: the newest long-term support line

/** Null when `version` (like process.versions.node) is supported, else the line that says why not. */
function refusal(version) {
  const major = Number(String(version).split('.')[0]);
  // A line newer than the newest named here is taken: refusing tomorrow's Node would be a false alarm.
  if (SUPPORTED.includes(major) || major > SUPPORTED[SUPPORTED.length - 1]) return null;
  return `error: Node.js ${version} is not supported: this service runs on Node.js ${SUPPORTED.slice(0, -1).join(', ')} or ${SUPPORTED[SUPPORTED.length - 1]}; get Node.js ${NEWEST} with \`nvm install\` (it reads .nvmrc), or see README.md#quick-start`;
}

/**
 * Null unless `main`, the script node was asked to run, is a file of dist/ that is not there; then the
 * line that says to build. `npm start` and the operator commands preload this file
 * (`node -r ./scripts/check-node.js dist/...`): on a checkout never built, node's own answer is a
 * MODULE_NOT_FOUND stack.
 */
function missingBuild(main) {
  if (main === undefined) return null;
  const file = path.resolve(main);
  const dist = path.join(__dirname, '..', 'dist');
  const rel = path.relative(dist, file);
  if (rel.startsWith('..') || path.isAbsolute(rel) || fs.existsSync(file)) return null;
  return `error: no build: ${path.join('dist', rel)} is missing; run \`npm run build\``;
}

module.exports = { SUPPORTED, NEWEST, refusal, missingBuild };

// Loaded at all (`node scripts/check-node.js`, `node -r ./scripts/check-node.js`, required by the
// build or by a built entry point), it refuses an unsupported Node at once; preloaded before a file
// of dist/ that is missing, it says to build.
{
  const why = refusal(process.versions.node) || missingBuild(process.argv[1]);
  if (why) {
    process.stderr.write(`${why}\n`);
    process.exit(1);
  }
}
