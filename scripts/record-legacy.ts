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
import '../src/basics/supported-node';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type CommandSpec, parseCommandLine, usageError } from '../src/basics/command-line';
import { describeAccepted } from './legacy/accepted';
import { freePort } from './free-port';
import { legacyHostDir, startLegacyHost } from './legacy/host';
import { casesOf, MATRIX } from './legacy/matrix';
import { type Recorded, RECORDINGS, readRecording, recordCases, recordingChanges, recordingPath, writeRecording } from './legacy/recording';

const COMMAND = {
  usage: ['npm run record-legacy -- [--only NAME]... [--check] [--list] [--port N]'],
  summary: [
    "Records the legacy ASMX host's answers under every site configuration of the matrix into",
    'test/fixtures/legacy/, starting a legacy host (LEGACY_HOST_DIR, default scripts/legacy-host/) for each.',
  ],
  options: {
    only: { type: 'string', multiple: true, value: 'NAME', help: 'record this configuration again, keep the others (repeatable)' },
    check: { type: 'boolean', help: 'record into a scratch directory and fail on any answer that differs from the committed recording' },
    list: { type: 'boolean', help: 'the configurations, and the accepted differences' },
    port: { type: 'integer', min: 1, max: 65535, help: "the legacy hosts' port (default: a free one)" },
  },
  notes: ['exit codes: 0 recorded (or as recorded), 1 --check found answers that differ, 2 usage'],
} as const satisfies CommandSpec;

async function main(argv: string[]): Promise<number> {
  const line = parseCommandLine(COMMAND, argv);
  if (typeof line === 'number') return line;
  const o = {
    only: line.values.only ?? [],
    check: line.values.check === true,
    list: line.values.list === true,
    port: line.values.port ?? null,
  };
  const unknown = o.only.filter((n) => !MATRIX.some((c) => c.name === n));
  if (unknown.length > 0) return usageError(COMMAND, `no configuration ${unknown.join(', ')} (--list names them)`);
  const chosen = MATRIX.filter((c) => o.only.length === 0 || o.only.includes(c.name));
  if (o.list) {
    for (const c of MATRIX)
      process.stdout.write(`${c.name.padEnd(32)} ${c.corpus.padEnd(9)} ${c.namespace}  ${c.virtualDir || '/'}  ${c.protocols}\n`);
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
    process.stdout.write(
      `${config.name}: ${cases.length} cases, ${found.length === 0 ? 'as recorded' : `${found.length} differ from the committed recording`}\n`,
    );
    for (const line of found) process.stdout.write(`  ${line}\n`);
  }
  if (o.check) {
    fs.rmSync(out, { recursive: true, force: true });
    process.stdout.write(`\n${describeAccepted()}`);
    if (changed > 0) {
      process.stdout.write(
        `\n${changed} answers of the legacy host differ from test/fixtures/legacy/: record them again (npm run record-legacy) and fix what the replay then finds\n`,
      );
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
      process.exit(1);
    },
  );
}
