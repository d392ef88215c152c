/**
 * Records the legacy ASMX host's answers under every configuration of the matrix
 * (scripts/legacy/matrix.ts) into test/fixtures/legacy/NAME.json, starting and stopping a legacy host
 * (LEGACY_HOST_DIR, default scripts/legacy-host/: Mono's System.Web.Services) for each.
 *
 *   npm run record-legacy                       record every configuration
 *   npm run record-legacy -- --only NAME...     record these again, keep the others
 *   npm run record-legacy -- --check            record afresh into a scratch directory and fail (exit 1)
 *                                               on any answer that differs from the committed recording
 *   npm run record-legacy -- --list             the configurations, and the accepted differences
 *   [--port N]                                  the legacy hosts' port (default: a free one)
 *
 * `--check` is CI's: the legacy host is the truth, so a committed recording that no longer says what
 * the host answers fails the run. A fresh answer differs when the replay's comparison (status, media
 * type, framing, Cache-Control, the body by XML meaning) tells it from the recorded one.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describeAccepted } from './legacy/accepted';
import { freePort } from './free-port';
import { legacyHostDir, startLegacyHost } from './legacy/host';
import { casesOf, MATRIX } from './legacy/matrix';
import { type Recorded, RECORDINGS, readRecording, recordCases, recordingChanges, recordingPath, writeRecording } from './legacy/recording';

interface Options {
  only: string[];
  check: boolean;
  list: boolean;
  port: number | null;
}

function parse(argv: string[]): Options | string {
  const o: Options = { only: [], check: false, list: false, port: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--only') o.only.push(argv[++i] ?? '');
    else if (a === '--check') o.check = true;
    else if (a === '--list') o.list = true;
    else if (a === '--port') o.port = Number(argv[++i]);
    else return `unknown argument ${a}`;
  }
  const unknown = o.only.filter((n) => !MATRIX.some((c) => c.name === n));
  if (unknown.length > 0) return `no configuration ${unknown.join(', ')} (--list names them)`;
  if (o.port !== null && !(Number.isInteger(o.port) && o.port > 0 && o.port < 65536)) return '--port takes a port number';
  return o;
}

async function main(argv: string[]): Promise<number> {
  const o = parse(argv);
  if (typeof o === 'string') {
    process.stderr.write(`${o}\nusage: npm run record-legacy -- [--only NAME]... [--check] [--list] [--port N]\n`);
    return 2;
  }
  const chosen = MATRIX.filter((c) => o.only.length === 0 || o.only.includes(c.name));
  if (o.list) {
    for (const c of MATRIX) process.stdout.write(`${c.name.padEnd(32)} ${c.corpus.padEnd(9)} ${c.namespace}  ${c.virtualDir || '/'}  ${c.protocols}\n`);
    process.stdout.write(`\n${describeAccepted()}`);
    return 0;
  }
  const dir = legacyHostDir();
  const out = o.check ? fs.mkdtempSync(path.join(os.tmpdir(), 'record-legacy-')) : RECORDINGS;
  let changed = 0;
  for (const config of chosen) {
    const host = await startLegacyHost(dir, config, o.port ?? (await freePort()));
    let cases: Recorded[];
    try {
      cases = await recordCases(host.base, casesOf(config));
    } finally {
      await host.stop();
    }
    const file = writeRecording(config, cases, out);
    if (!o.check) {
      process.stdout.write(`${config.name}: ${cases.length} cases recorded to ${path.relative(process.cwd(), file)}\n`);
      continue;
    }
    const committed = fs.existsSync(recordingPath(config.name)) ? readRecording(config.name).cases : [];
    const found = recordingChanges(committed, cases);
    changed += found.length;
    process.stdout.write(`${config.name}: ${cases.length} cases, ${found.length === 0 ? 'as recorded' : `${found.length} differ from the committed recording`}\n`);
    for (const line of found) process.stdout.write(`  ${line}\n`);
  }
  if (o.check) {
    fs.rmSync(out, { recursive: true, force: true });
    process.stdout.write(`\n${describeAccepted()}`);
    if (changed > 0) {
      process.stdout.write(`\n${changed} answers of the legacy host differ from test/fixtures/legacy/: record them again (npm run record-legacy) and fix what the replay then finds\n`);
      return 1;
    }
  }
  return 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
      process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exit(2);
    },
  );
}
