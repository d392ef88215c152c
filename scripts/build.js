#!/usr/bin/env node

/**
 * Compiles the project into dist/ (or --out DIR) without ever leaving it incomplete.
 *
 *   node scripts/build.js                  dist/: what `npm ci` (prepare) and `npm run build` make
 *   node scripts/build.js --out .dev-build  the development tools' own build, so they never touch dist/
 *
 * A service may be running from dist/ while it is rebuilt (a developer's `npm start`, a production
 * host upgraded in place), and node loads some files only when first needed (the shadow copier,
 * worker threads). So tsc writes into a staging directory beside the output, each file is then
 * renamed over its old version (a rename replaces a file at once: it is never absent), and only
 * afterwards are files the new build no longer has removed. A failed compile changes nothing.
 *
 * Plain JavaScript with no dependency: it has to run, or fail with one clear line, on an install
 * whose dev dependencies have been pruned.
 */
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
require('./check-node'); // an unsupported Node stops here, in one line

const ROOT = path.resolve(__dirname, '..');
const USAGE = 'usage: node scripts/build.js [--out DIR]';

/** The output as a person reads it: dist/ for the project's own, the full path elsewhere. */
function shown(out) {
  const rel = path.relative(ROOT, out);
  return rel === '' || rel.startsWith('..') || path.isAbsolute(rel) ? out : rel;
}

function fail(message, code = 1) {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

function outDir(argv) {
  if (argv.length === 0) return path.join(ROOT, 'dist');
  if (argv.length === 2 && argv[0] === '--out' && argv[1] !== '') return path.resolve(argv[1]);
  return fail(USAGE, 2);
}

/** Every file under dir, as paths relative to it (an absent dir has none). */
function filesUnder(dir, rel = '') {
  let entries;
  try {
    entries = fs.readdirSync(path.join(dir, rel), { withFileTypes: true });
  } catch (e) {
    if (e.code === 'ENOENT') return [];
    throw e;
  }
  return entries.flatMap((e) => (e.isDirectory() ? filesUnder(dir, path.join(rel, e.name)) : [path.join(rel, e.name)]));
}

/** Empty directories under dir, deepest first, removed; dir itself is kept. */
function removeEmptyDirs(dir) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (!e.isDirectory()) continue;
    const sub = path.join(dir, e.name);
    removeEmptyDirs(sub);
    if (fs.readdirSync(sub).length === 0) fs.rmdirSync(sub);
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

/** Staging directories of builds that were killed before they finished. */
function removeAbandoned(parent, prefix) {
  for (const name of fs.readdirSync(parent)) {
    const m = name.startsWith(prefix) ? /^(\d+)$/.exec(name.slice(prefix.length)) : null;
    if (m !== null && Number(m[1]) !== process.pid && !alive(Number(m[1])))
      fs.rmSync(path.join(parent, name), { recursive: true, force: true });
  }
}

function install(staging, out) {
  const built = filesUnder(staging);
  for (const rel of built) {
    const target = path.join(out, rel);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    // A directory where a file now goes (or the reverse, handled by mkdirSync failing) is a layout
    // change no build of this project makes; it is removed rather than left to fail the rename.
    if (fs.statSync(target, { throwIfNoEntry: false })?.isDirectory()) fs.rmSync(target, { recursive: true });
    fs.renameSync(path.join(staging, rel), target);
  }
  const keep = new Set(built);
  for (const rel of filesUnder(out)) if (!keep.has(rel) && OUTPUT.test(rel)) fs.rmSync(path.join(out, rel));
  removeEmptyDirs(out);
}

/**
 * The commit the sources are, when the project is a git checkout of its own (not a folder inside
 * another repository, not an unpacked tarball): the full hash, with `-dirty` when tracked files
 * differ from it, as `git describe --dirty` says. Null when git or a commit is missing.
 */
function gitCommit(root) {
  const git = (...args) => spawnSync('git', ['-C', root, ...args], { encoding: 'utf8' });
  const top = git('rev-parse', '--show-toplevel');
  if (top.status !== 0 || fs.realpathSync(top.stdout.trim()) !== fs.realpathSync(root)) return null;
  const head = git('rev-parse', '--verify', '--quiet', 'HEAD');
  if (head.status !== 0) return null;
  const changes = git('status', '--porcelain', '--untracked-files=no');
  return head.stdout.trim() + (changes.status === 0 && changes.stdout.trim() !== '' ? '-dirty' : '');
}

/**
 * Which build this is, written at its root (src/basics/build-info.ts reads it): the service's start
 * line, /metrics and the console say it, and nothing asks git at run time. `root`: the project built.
 */
function writeBuildInfo(dir, root = ROOT) {
  const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  fs.writeFileSync(path.join(dir, 'build-info.json'), `${JSON.stringify({ version, commit: gitCommit(root) })}\n`);
}

/** What tsc writes; the sweep of files the new build no longer has removes nothing else. */
const OUTPUT = /\.(js|js\.map|json)$/;

/** The sweep deletes files: never let it near the sources, whatever --out says. */
function refuseSources(out) {
  const rel = path.relative(out, ROOT);
  const holdsProject = rel === '' || !rel.startsWith('..');
  if (holdsProject || filesUnder(out).some((f) => /\.tsx?$/.test(f) && !f.endsWith('.d.ts'))) {
    fail(`refusing to build into ${out}: it holds sources, not a build`, 2);
  }
}

function main() {
  const out = outDir(process.argv.slice(2));
  refuseSources(out);
  let tsc;
  try {
    tsc = require.resolve('typescript/bin/tsc', { paths: [ROOT] });
  } catch {
    // `npm ci --omit=dev` runs prepare too: a build already there (shipped, or made before a prune)
    // is what the operator wants to keep, so that is not an error; with none, nothing can run.
    if (process.env.npm_lifecycle_event === 'prepare' && fs.existsSync(path.join(out, 'src', 'main.js'))) {
      process.stderr.write(`typescript not installed: ${shown(out)}/ kept as it is\n`);
      return;
    }
    fail('typescript not installed: run npm ci');
  }
  const parent = path.dirname(out);
  const prefix = `.${path.basename(out).replace(/^\.+/, '')}.next-`;
  fs.mkdirSync(parent, { recursive: true });
  removeAbandoned(parent, prefix);
  const staging = path.join(parent, `${prefix}${process.pid}`);
  fs.rmSync(staging, { recursive: true, force: true });
  const run = spawnSync(process.execPath, [tsc, '-p', path.join(ROOT, 'tsconfig.build.json'), '--outDir', staging], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  let status = run.status;
  try {
    if (status === 0) status = checkWsdl(staging);
    if (status === 0) {
      writeBuildInfo(staging);
      install(staging, out);
    }
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  if (status !== 0) fail(`build failed: ${shown(out)}/ left as it was`, status || 1);
}

/**
 * node-soap reads the WSDLs as the new build serves them, each held to the contract (a WSDL that
 * parts from it fails the build, naming the operation); what passed is recorded in the build, and a
 * start with those WSDLs does not read them again (src/bindings/soap/node-soap.ts).
 */
function checkWsdl(staging) {
  const run = spawnSync(process.execPath, [path.join(staging, 'scripts', 'check-wsdl.js'), staging], { cwd: ROOT, stdio: 'inherit' });
  return run.status;
}

// Run, it builds; required (the tests), it lends what a build writes.
if (require.main === module) main();
module.exports = { writeBuildInfo };
