#!/usr/bin/env node
'use strict';
/**
 * The Node.js lines the service runs on, and the one-line refusal of any other. Run by `npm ci`
 * (preinstall) and by the build, before anything native is loaded: better-sqlite3 13 needs Node 22,
 * and an end-of-life Node fails a school's security review. Plain JavaScript with no dependency, so
 * it runs on any Node. package.json's `engines`, `.nvmrc` and the README say the same (test/runtime.test.ts).
 */
const SUPPORTED = [22, 24, 26];
const NEWEST = 24; // the line .nvmrc names: the newest long-term support line

/** Null when `version` (like process.versions.node) is supported, else the line that says why not. */
function refusal(version) {
  const major = Number(String(version).split('.')[0]);
  // A line newer than the newest named here is taken: refusing tomorrow's Node would be a false alarm.
  if (SUPPORTED.includes(major) || major > SUPPORTED[SUPPORTED.length - 1]) return null;
  return `error: Node.js ${version} is not supported: this service runs on Node.js ${SUPPORTED.slice(0, -1).join(', ')} or ${SUPPORTED[SUPPORTED.length - 1]}; get Node.js ${NEWEST} with \`nvm install\` (it reads .nvmrc), or see README.md#quick-start`;
}

module.exports = { SUPPORTED, NEWEST, refusal };

// Loaded at all (`node scripts/check-node.js`, `node -r ./scripts/check-node.js`, required by the
// build), it refuses an unsupported Node at once.
{
  const why = refusal(process.versions.node);
  if (why !== null) {
    process.stderr.write(`${why}\n`);
    process.exit(1);
  }
}
