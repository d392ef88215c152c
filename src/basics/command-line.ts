import { parseArgs } from 'node:util';
import { versionLine } from './version';

/**
 * The one way a command line is read, by the service (src/main.ts) and by every command of scripts/:
 * node's own parser (`node:util` parseArgs) over a spec that also writes the command's `--help`.
 *
 * - `--help` (`-h`) prints the help on stdout, `--version` the version; either ends the command with
 *   exit 0 before it reads a setting, opens a file or starts anything.
 * - An unknown option, a missing or empty value, a value on a switch, an option given twice, a
 *   number out of range or a wrong count of arguments: `error: why` and the usage on stderr, exit 2.
 *
 * `--` ends the options (`-- --help` is an argument). A value that starts with `-` must be given as
 * `--option=-value`: `--students --devices b.csv` is a missing value, not a file named `--devices`.
 */

export interface OptionSpec {
  /** `integer`: a whole number within min..max, given to the command as a number. */
  type: 'string' | 'boolean' | 'integer';
  short?: string;
  /** May be given more than once (a string option's values, in order). */
  multiple?: boolean;
  /** The value's name in the help, e.g. FILE (default VALUE, or N for integers). */
  value?: string;
  min?: number;
  max?: number;
  /** What the option does, one line. */
  help: string;
}

export interface CommandSpec {
  /** The usage line(s), without `usage: `, e.g. `npm run outbox -- --list [--failed] [--limit N]`. */
  usage: readonly string[];
  /** What the command does, in a line or two (lines of its own, as they are printed). */
  summary: readonly string[];
  options: Readonly<Record<string, OptionSpec>>;
  /** Its arguments by name in order: `[NAME]` is optional, `NAME...` (or `[NAME...]`) takes any number more. */
  positionals?: readonly string[];
  /** Lines printed after the options: exit codes, what the environment sets. */
  notes?: readonly string[];
}

type ValueOf<O extends OptionSpec> = O['type'] extends 'boolean'
  ? boolean
  : O['type'] extends 'integer'
    ? number
    : O['multiple'] extends true
      ? string[]
      : string;

export type Values<S extends CommandSpec> = { -readonly [K in keyof S['options']]?: ValueOf<S['options'][K]> };

export interface CommandLine<S extends CommandSpec> {
  values: Values<S>;
  positionals: string[];
}

export interface CommandIo {
  out(line: string): void;
  err(line: string): void;
}

export const processIo: CommandIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

const BUILT_IN: Readonly<Record<string, OptionSpec>> = {
  help: { type: 'boolean', short: 'h', help: 'print this help and exit' },
  version: { type: 'boolean', help: 'print the version and exit' },
};

class UsageError extends Error {}

/**
 * The command line read by `spec`, or the exit code when the command is to stop here: 0 after
 * `--help` or `--version`, 2 after a usage error (each already printed through `io`).
 */
export function parseCommandLine<const S extends CommandSpec>(
  spec: S,
  argv: readonly string[],
  io: CommandIo = processIo,
): CommandLine<S> | number {
  let line: CommandLine<S> & { help: boolean; version: boolean };
  try {
    line = read(spec, argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    return usageError(spec, e.message, io);
  }
  if (line.help) {
    // In one write: `--help | head` must not find the pipe closed half way through.
    io.out(helpText(spec));
    return 0;
  }
  if (line.version) {
    io.out(versionLine());
    return 0;
  }
  return { values: line.values, positionals: line.positionals };
}

/** A refusal the command finds itself (options that do not go together...): said as the parser says its own, exit 2. */
export function usageError(spec: CommandSpec, message: string, io: CommandIo = processIo): 2 {
  io.err(`error: ${message}`);
  for (const l of usageLines(spec)) io.err(l);
  return 2;
}

const usageLines = (spec: CommandSpec): string[] => spec.usage.map((l, i) => `${i === 0 ? 'usage: ' : '       '}${l}`);

function read<S extends CommandSpec>(spec: S, argv: readonly string[]): CommandLine<S> & { help: boolean; version: boolean } {
  const all = { ...spec.options, ...BUILT_IN };
  const options = Object.fromEntries(
    Object.entries(all).map(([name, o]) => [
      name,
      {
        type: o.type === 'boolean' ? ('boolean' as const) : ('string' as const),
        ...(o.short === undefined ? {} : { short: o.short }),
        multiple: true,
      },
    ]),
  );
  // Not strict: the tokens are judged here, in the commands' words, rather than by node's messages.
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  const values: Record<string, unknown> = {};
  const positionals: string[] = [];
  let help = false;
  let version = false;
  for (const token of tokens) {
    if (token.kind === 'option-terminator') continue;
    if (token.kind === 'positional') {
      positionals.push(token.value);
      continue;
    }
    const o = Object.hasOwn(all, token.name) ? all[token.name]! : undefined;
    if (o === undefined) throw new UsageError(`unknown option ${token.rawName}`);
    const shown = token.rawName;
    if (token.name === 'help' || token.name === 'version') {
      if (token.value !== undefined) throw new UsageError(`${shown} takes no value`);
      if (token.name === 'help') help = true;
      else version = true;
      continue;
    }
    if (!o.multiple && token.name in values) throw new UsageError(`--${token.name} given more than once`);
    if (o.type === 'boolean') {
      if (token.value !== undefined) throw new UsageError(`${shown} takes no value`);
      values[token.name] = true;
      continue;
    }
    const value = token.value;
    // parseArgs takes the next argument whatever it is; one that looks like an option is not a value.
    if (value === undefined || value === '' || (!token.inlineValue && value.startsWith('-')))
      throw new UsageError(`${shown} needs a value (${placeholder(o)})`);
    if (o.type === 'integer') {
      values[token.name] = integer(shown, value, o);
      continue;
    }
    values[token.name] = o.multiple ? [...((values[token.name] as string[] | undefined) ?? []), value] : value;
  }
  // --help and --version win over any other mistake but an unknown option: they are what was asked.
  if (!help && !version) checkPositionals(spec.positionals ?? [], positionals);
  return { values: values as Values<S>, positionals, help, version };
}

const placeholder = (o: OptionSpec): string => o.value ?? (o.type === 'integer' ? 'N' : 'VALUE');

function integer(shown: string, value: string, o: OptionSpec): number {
  const min = o.min ?? 0;
  const max = o.max ?? Number.MAX_SAFE_INTEGER;
  const n = /^-?\d{1,16}$/.test(value) ? Number(value) : NaN;
  if (!(n >= min && n <= max))
    throw new UsageError(`${shown} takes a whole number from ${min}${max === Number.MAX_SAFE_INTEGER ? '' : ` to ${max}`}, not "${value}"`);
  return n;
}

function checkPositionals(names: readonly string[], given: readonly string[]): void {
  const required = names.filter((n) => !n.startsWith('['));
  const endless = names.some((n) => n.endsWith('...') || n.endsWith('...]'));
  if (given.length < required.length) throw new UsageError(`missing ${required[given.length]}`);
  if (!endless && given.length > names.length) throw new UsageError(`unexpected argument "${given[names.length]}"`);
}

/** What `--help` prints: usage, summary, the options with what each does, the notes. */
export function helpText(spec: CommandSpec): string {
  const rows = Object.entries({ ...spec.options, ...BUILT_IN }).map(([name, o]) => {
    const value = o.type === 'boolean' ? '' : ` ${placeholder(o)}`;
    return [`${o.short === undefined ? '' : `-${o.short}, `}--${name}${value}`, o.help] as const;
  });
  const width = Math.max(...rows.map(([left]) => left.length)) + 2;
  return [
    ...usageLines(spec),
    '',
    ...spec.summary,
    '',
    'options:',
    ...rows.map(([left, help]) => `  ${left.padEnd(width)}${help}`),
    ...(spec.notes === undefined || spec.notes.length === 0 ? [] : ['', ...spec.notes]),
  ].join('\n');
}
