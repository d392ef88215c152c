/**
 * Issue 40, point 3: one way to read a command line (src/basics/command-line.ts, node's parseArgs),
 * for the service and every command. Through each built entry point: `--help` prints the help and
 * exits 0, `--version` the version, having started and written nothing (the working directory, which
 * holds the store's path and HOME, stays empty); an unknown option, a missing value, a bad number or
 * a wrong count of arguments prints the error and the usage on stderr, exit 2. docs/operations-commands.md
 * shows each command's help exactly as `--help` prints it.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type CommandSpec, helpText, parseCommandLine } from '../src/basics/command-line';
import { ENTRY_POINTS } from './helpers/entry-points';
import { BUILD_DIR, PROJECT_ROOT } from './helpers/paths';

const pkg = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
const PARSING = ENTRY_POINTS.filter((e) => e.parses);
const COMMANDS = PARSING.filter((e) => e.command !== null);

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'student-info-cli-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function run(file: string, ...args: string[]) {
  const work = fs.mkdtempSync(path.join(dir, 'run-'));
  const r = spawnSync(process.execPath, [path.join(BUILD_DIR, file), ...args], {
    cwd: work,
    // A port the service would take, a store it would create, a HOME npm would write into: all in `work`.
    env: {
      PATH: process.env.PATH ?? '',
      HOME: work,
      SQLITE_PATH: path.join(work, 'data', 'school.db'),
      PORT: '0',
      ADMIN_PORT: '0',
      LOG_LEVEL: 'info',
    },
    encoding: 'utf8',
    timeout: 60_000,
  });
  const left = fs.readdirSync(work, { recursive: true, encoding: 'utf8' });
  fs.rmSync(work, { recursive: true, force: true });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, left };
}

/**
 * Each entry point's `--help`, run once and kept: three tests compare against it (the usage after an
 * error, the docs' copy), and each run starts a node that loads the whole entry point.
 */
const helps = new Map<string, ReturnType<typeof run>>();
function help(file: string): ReturnType<typeof run> {
  if (!helps.has(file)) helps.set(file, run(file, '--help'));
  return helps.get(file)!;
}

/** The commit the build under test recorded (scripts/build.js; test/build-info.test.ts holds it to git). */
function commit(): string | null {
  return (JSON.parse(fs.readFileSync(path.join(BUILD_DIR, 'build-info.json'), 'utf8')) as { commit: string | null }).commit;
}

describe.each(PARSING.map((e) => [e.file, e]))('%s', (file) => {
  test('--help: the help on stdout, exit 0, nothing started or written', () => {
    const r = help(file);
    expect([r.status, r.stderr, r.left]).toEqual([0, '', []]);
    expect(r.stdout).toMatch(
      /^usage: .+\n(?: {7}.+\n)*\n.+[\s\S]*\noptions:\n[\s\S]* {2}-h, --help +print this help and exit\n {2}--version +print the version and exit\n/,
    );
    // No log line (the service's are JSON), nothing but the help.
    expect(r.stdout).not.toMatch(/^\{/m);
    expect(run(file, '-h').stdout).toBe(r.stdout);
  });

  test('--version: the version on stdout, exit 0, nothing started or written', () => {
    const r = run(file, '--version');
    const sha = commit();
    expect([r.status, r.stderr, r.left]).toEqual([0, '', []]);
    expect(r.stdout).toBe(
      `${pkg.name} ${pkg.version}${sha === null ? '' : ` (commit ${sha.slice(0, 12)}${sha.endsWith('-dirty') ? '-dirty' : ''})`}\n`,
    );
  });

  test('an unknown option: the error and the usage on stderr, exit 2, nothing written', () => {
    const r = run(file, '--no-such-option');
    expect([r.status, r.stdout, r.left]).toEqual([2, '', []]);
    expect(r.stderr).toMatch(/^error: unknown option --no-such-option\nusage: /);
    expect(r.stderr.split('\n').slice(1).join('\n')).toBe(`${help(file).stdout.split('\n\n')[0] ?? ''}\n`);
  });
});

test.each([
  ['src/main.js', ['extra'], 'unexpected argument "extra"'],
  ['scripts/import.js', ['--students'], '--students needs a value (FILE.csv)'],
  ['scripts/import.js', ['--students', '--replace'], '--students needs a value (FILE.csv)'],
  ['scripts/import.js', ['--replace=yes'], '--replace takes no value'],
  ['scripts/import.js', ['--devices', 'a.csv', '--devices=b.csv'], '--devices given more than once'],
  ['scripts/outbox.js', ['--list', '--limit'], '--limit needs a value (N)'],
  ['scripts/outbox.js', ['--list', '--limit', '0'], '--limit takes a whole number from 1 to 999999, not "0"'],
  ['scripts/outbox.js', ['--retry', 'x'], '--retry takes a whole number from 1, not "x"'],
  ['scripts/outbox.js', [], 'say what to do: --list, --retry ID or --retry-failed'],
  ['scripts/outbox.js', ['--list', '--retry-failed'], '--list and --retry-failed do not go together'],
  ['scripts/outbox.js', ['--retry-failed', '--failed'], '--failed and --limit go with --list only'],
  ['scripts/shadow-report.js', [], 'missing FILE'],
  ['scripts/shadow-report.js', ['a.log', 'b.log'], 'unexpected argument "b.log"'],
  ['scripts/gen-students.js', [], 'missing OUT.csv'],
  ['scripts/gen-students.js', ['out.csv', 'many'], 'ROWS must be a whole number, not "many"'],
  ['scripts/audit.js', ['now'], 'unexpected argument "now"'],
  ['scripts/fuzz.js', ['--count', '-5'], '--count needs a value (N)'],
  ['scripts/fuzz.js', ['--url', 'ftp://x'], '--url takes an http:// URL, not "ftp://x"'],
  ['scripts/record-legacy.js', ['--port', '70000'], '--port takes a whole number from 1 to 65535, not "70000"'],
  ['scripts/record-legacy.js', ['--only', 'no-such-configuration'], 'no configuration no-such-configuration (--list names them)'],
  ['scripts/compare-legacy.js', ['http://legacy.example/'], 'give LEGACY_URL and OURS_URL'],
  ['scripts/test-clients.js', ['cobol'], 'unknown client cobol'],
  ['scripts/bench/index.js', ['--store', 'mysql'], '--store takes sqlite or postgres'],
  [
    'scripts/bench/index.js',
    ['--publish', '--quick'],
    '--publish is for the whole bench only: not with --quick, --only, --out or --compare',
  ],
  ['scripts/bench/soak.js', ['--minutes', '0'], '--minutes takes a whole number from 1, not "0"'],
  ['scripts/bench/stall.js', ['--rows'], '--rows needs a value (N)'],
  ['scripts/bench/profile.js', ['no-such-workload'], /^unknown workload no-such-workload; one of token-soap11, /],
])('%s %j: exit 2, the error and the usage, nothing written', (file, args, message) => {
  const r = run(file, ...args);
  expect([r.status, r.stdout, r.left]).toEqual([2, '', []]);
  const [first, ...usage] = r.stderr.trimEnd().split('\n');
  if (typeof message === 'string') expect(first).toBe(`error: ${message}`);
  else expect(first!.slice('error: '.length)).toMatch(message);
  expect(usage[0]).toMatch(/^usage: /);
});

test('`-- --help` is an argument, not the option: shadow-report tries to read a file of that name', () => {
  const r = run('scripts/shadow-report.js', '--', '--help');
  expect([r.status, r.stdout, r.stderr]).toEqual([1, '', 'error: cannot read --help: no such file\n']);
});

test("docs/operations-commands.md shows each command's help as --help prints it", () => {
  const doc = fs.readFileSync(path.join(PROJECT_ROOT, 'docs', 'operations-commands.md'), 'utf8');
  const missing = COMMANDS.filter((e) => !doc.includes(`\`\`\`text\n${help(e.file).stdout}\`\`\``)).map((e) => e.command);
  expect(missing).toEqual([]);
});

describe('the parser', () => {
  const SPEC = {
    usage: ['try [--name NAME] [--n N] [--flag] [--tag T]... FILE [MORE...]'],
    summary: ['A command to try the parser on.'],
    options: {
      name: { type: 'string', value: 'NAME', help: 'a name' },
      n: { type: 'integer', min: 1, max: 9, help: 'a number' },
      flag: { type: 'boolean', short: 'f', help: 'a switch' },
      tag: { type: 'string', multiple: true, value: 'T', help: 'a tag, again and again' },
    },
    positionals: ['FILE', '[MORE...]'],
    notes: ['exit codes: 0 tried, 2 usage'],
  } as const satisfies CommandSpec;
  const parse = (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const result = parseCommandLine(SPEC, argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
    return { result, out, err };
  };

  test('values, numbers, repeats, short switches, = and -- as in any program', () => {
    expect(parse('--name', 'x', '--n=3', '-f', '--tag', 'a', '--tag=-b', 'file', '--', '--not-an-option').result).toEqual({
      values: { name: 'x', n: 3, flag: true, tag: ['a', '-b'] },
      positionals: ['file', '--not-an-option'],
    });
    expect(parse('file').result).toEqual({ values: {}, positionals: ['file'] });
  });

  test.each([
    [['--name'], '--name needs a value (NAME)'],
    [['--name='], '--name needs a value (NAME)'],
    [['--name', '-f', 'file'], '--name needs a value (NAME)'],
    [['--n', '10', 'file'], '--n takes a whole number from 1 to 9, not "10"'],
    [['--n', '1.5', 'file'], '--n takes a whole number from 1 to 9, not "1.5"'],
    [['--flag=no', 'file'], '--flag takes no value'],
    [['-x', 'file'], 'unknown option -x'],
    [['--name', 'a', '--name', 'b', 'file'], '--name given more than once'],
    [[], 'missing FILE'],
    [['--help=yes'], '--help takes no value'],
  ])('%j: exit 2, the error then the usage', (argv, message) => {
    const { result, out, err } = parse(...argv);
    expect([result, out, err]).toEqual([2, [], [`error: ${message}`, `usage: ${SPEC.usage[0]}`]]);
  });

  test('--help wins over a missing argument, not over an unknown option', () => {
    expect(parse('--help')).toEqual({ result: 0, out: [helpText(SPEC)], err: [] });
    expect(parse('--help', '--bogus').result).toBe(2);
  });

  test('the help: usage, summary, options aligned with their values, the notes', () => {
    expect(helpText(SPEC)).toBe(
      [
        'usage: try [--name NAME] [--n N] [--flag] [--tag T]... FILE [MORE...]',
        '',
        'A command to try the parser on.',
        '',
        'options:',
        '  --name NAME  a name',
        '  --n N        a number',
        '  -f, --flag   a switch',
        '  --tag T      a tag, again and again',
        '  -h, --help   print this help and exit',
        '  --version    print the version and exit',
        '',
        'exit codes: 0 tried, 2 usage',
      ].join('\n'),
    );
  });
});
