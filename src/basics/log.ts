import pino from 'pino';
import { destination, flushBatched, setLogBufferBytes, tellDroppedLines } from './log-destination';
import { maskPhone, maskText } from './mask';

/**
 * Structured log lines on stderr: one JSON object each (pino), or pino-pretty's lines when stderr is
 * a terminal. Internal details (stacks, SQL) go here and only here; clients get the ASMX texts of
 * errors.ts. Every line goes through `Bounder` (pino's through `fieldsOf`, the request line's through
 * `requestLine`) and `lineOf` below, whoever writes it: that is where values are bounded and secrets
 * masked, so no caller (and no value's content) can get around them.
 * docs/logs.md says what a line holds.
 */
export type Fields = Record<string, unknown>;

/** A string value longer than this is cut, with a marker saying how much went. */
export const MAX_VALUE_CHARS = 256;
/**
 * Messages are the code's own sentences (the start line names the address, the store's path, what
 * to do next): cut later than values, still far inside a line.
 */
export const MAX_MESSAGE_CHARS = 1024;
/** A stack keeps its frames, which is what an operator reads it for; its message part is cut as a value. */
const MAX_STACK_CHARS = 2048;
/** What all the string values of one line may add up to before the rest are cut to their marker. */
const LINE_BUDGET_CHARS = 3072;
/** No line is longer than this, in bytes, whatever it holds (the last resort: see lineOf). */
export const MAX_LINE_BYTES = 4096;
const MAX_DEPTH = 4;
const MAX_KEYS = 32;
const MAX_ITEMS = 16;

/** Secrets, at any depth and in any case: the value goes, whatever it is. */
const SECRET_KEYS = new Set(['token', 'secret', 'password', 'serverkey', 'authorization', 'cookie']);
/**
 * `code` is AuthCode's parameter; removed at the top and under `params`/`args` only, since errors
 * carry their own `code` (ENOENT, SQLITE_BUSY), which is useful.
 */
const CODE_PARENTS = new Set(['', 'params', 'args']);

/** Phones and codes: the one rule, shared with the stored errors and the shadow log (mask.ts). */
export { maskPhone };

/**
 * How far past a cut a value is masked first: a phone that straddles the cut is seen whole (and
 * masked whole) rather than cut into a part too short to be recognised and left in the clear.
 */
const MASK_MARGIN = 64;

/** `text` cut to `max` characters (never inside a surrogate pair), marked with how many went. */
export function cut(text: string, max: number = MAX_VALUE_CHARS): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max);
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…[${text.length - end} more chars]`;
}

/**
 * `text` masked (mask.ts), then cut to `max` as `cut` does. A long text is masked only as far as
 * it is kept (and MASK_MARGIN more); the marker counts what went of the text as it came.
 */
export function maskedCut(text: string, max: number): string {
  if (text.length <= max + MASK_MARGIN) return cut(maskText(text), max);
  const masked = maskText(text.slice(0, max + MASK_MARGIN));
  const kept = cut(masked, max);
  const head = masked.length > max ? kept.slice(0, kept.lastIndexOf('…[')) : kept;
  return `${head}…[${text.length - head.length} more chars]`;
}

/** Walks one line's fields once: bounded in size, depth and count, secrets out, phones masked. */
class Bounder {
  private budget = LINE_BUDGET_CHARS;

  /** A string value or key, masked and bounded. */
  string(text: string, max = MAX_VALUE_CHARS): string {
    const limit = Math.min(max, this.budget);
    this.budget = Math.max(0, this.budget - Math.min(text.length, max));
    return maskedCut(text, limit);
  }

  value(value: unknown, key: string, parent: string, depth: number): unknown {
    const name = key.toLowerCase();
    if (SECRET_KEYS.has(name) || (name === 'code' && CODE_PARENTS.has(parent))) return '[redacted]';
    if (name === 'phone') return maskPhone(value);
    switch (typeof value) {
      case 'string':
        return this.string(value, name === 'stack' ? MAX_STACK_CHARS : MAX_VALUE_CHARS);
      case 'number':
      case 'boolean':
      case 'undefined':
        return value;
      case 'bigint':
        return String(value);
      case 'function':
      case 'symbol':
        return undefined;
    }
    if (value === null) return null;
    if (value instanceof Error) return this.object(stackFirst(pino.stdSerializers.err(value)), name, depth, true);
    if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
    if (ArrayBuffer.isView(value)) return `[${value.byteLength} bytes]`;
    if (depth >= MAX_DEPTH) return '[object]';
    if (Array.isArray(value)) {
      const items = value.slice(0, MAX_ITEMS).map((item) => this.value(item, key, parent, depth + 1) ?? null);
      if (value.length > MAX_ITEMS) items.push(`…[${value.length - MAX_ITEMS} more items]`);
      return items;
    }
    return this.object(value as Fields, name, depth, false);
  }

  object(value: Fields, name: string, depth: number, inherited: boolean): Fields {
    const out: Fields = {};
    let seen = 0;
    // An error's type, message and stack are inherited accessors (pino's serializer); others own.
    for (const key in value) {
      if (!inherited && !Object.hasOwn(value, key)) continue;
      if (++seen > MAX_KEYS) continue;
      const v = this.value(value[key], key, name, depth + 1);
      if (v !== undefined) out[this.string(key, 64)] = v;
    }
    if (seen > MAX_KEYS) out['…'] = `${seen - MAX_KEYS} more fields`;
    return out;
  }
}

/** A stack whose message part is long is cut there, before the frames: they are what it is kept for. */
function stackFirst(err: Fields): Fields {
  const stack = err.stack;
  if (typeof stack !== 'string') return err;
  const frames = stack.indexOf('\n    at ');
  if (frames > MAX_VALUE_CHARS) err.stack = cut(stack.slice(0, frames), MAX_VALUE_CHARS) + stack.slice(frames);
  return err;
}

/** A line's fields as written: what pino's formatters.log is given. */
export function fieldsOf(fields: Fields): Fields {
  return new Bounder().object(fields, '', -1, false);
}

/**
 * The last resort, on the finished line: one still over MAX_LINE_BYTES (a message of many wide
 * characters, say) keeps only what says which line it was, and how long it would have been.
 */
export function lineOf(line: string): string {
  if (line.length * 3 <= MAX_LINE_BYTES) return line;
  const bytes = Buffer.byteLength(line);
  if (bytes <= MAX_LINE_BYTES) return line;
  const { level, time, pid, reqId, msg } = JSON.parse(line) as Fields;
  const short = { level, time, pid, reqId, msg: typeof msg === 'string' ? cut(msg, 128) : undefined, lineCut: bytes };
  return `${JSON.stringify(short)}\n`;
}

const options: pino.LoggerOptions = {
  // The level is set from the validated configuration at start (configureLog); until then, info.
  level: 'info',
  base: { pid: process.pid },
  timestamp: pino.stdTimeFunctions.isoTime,
  formatters: { level: (label) => ({ level: label }), log: fieldsOf },
  hooks: {
    // The message is a value too, masked and cut (and pino takes an error's message for it when there is none).
    logMethod(args, method) {
      for (let i = 0; i < args.length; i++) if (typeof args[i] === 'string') args[i] = maskedCut(args[i] as string, MAX_MESSAGE_CHARS);
      return method.apply(this, args);
    },
    streamWrite: lineOf,
  },
};

/** A logger with this module's rules writing to `to`: the process's own below, a test's capture. */
export const createLogger = (to: pino.DestinationStream): pino.Logger => pino(options, to);

/** pino itself, for code that wants its API (`isLevelEnabled`, the request line). */
export const logger: pino.Logger = createLogger(destination);

/** Writes out every line still batched (log-destination.ts); bounded by a second. */
export const flushLog = (): Promise<void> => flushBatched((done) => logger.flush(done));

/** The fields of the line every request gets (app/request-hooks.ts), in the order it writes them. */
export interface RequestFields {
  reqId: string;
  method?: string;
  endpoint?: string;
  operation?: string;
  binding?: string;
  status: number;
  fault?: string;
  reason?: string;
  ms: number;
  client: string | null;
  bytesIn: number;
  bytesOut: number;
}
const REQUEST_KEYS = [
  'reqId',
  'method',
  'endpoint',
  'operation',
  'binding',
  'status',
  'fault',
  'reason',
  'ms',
  'client',
  'bytesIn',
  'bytesOut',
] as const satisfies readonly (keyof RequestFields)[];

/**
 * The request line as `logger.info(fields, 'request')` writes it, made without pino's generic walk
 * of an object of any shape (its hooks, a field object copied, each value's type asked): 7% of the
 * samples of a small call under load went there. Each string is bounded and masked as any line's are
 * (Bounder), and written as JSON (as pino writes on Node 25+; below it, pino leaves a lone surrogate
 * unescaped). test/logs.test.ts holds the two to the same bytes.
 */
export function requestLine(fields: RequestFields, now: number = Date.now()): string {
  const bounder = new Bounder();
  let line = `{"level":"info","time":"${new Date(now).toISOString()}","pid":${process.pid}`;
  for (const key of REQUEST_KEYS) {
    const value = fields[key];
    if (value === undefined) continue;
    const text =
      typeof value === 'string'
        ? JSON.stringify(bounder.string(value))
        : value === null || !Number.isFinite(value)
          ? 'null'
          : String(value);
    // The key counts against the line's budget after its value, as Bounder.object counts it (the keys
    // here are fixed and short: only the budget is wanted).
    bounder.string(key, 64);
    line += `,"${key}":${text}`;
  }
  return lineOf(`${line},"msg":"request"}\n`);
}

/** Writes the request line where the logger writes, when it logs at info. */
export function logRequest(fields: RequestFields): void {
  if (logger.isLevelEnabled('info')) destination.write(requestLine(fields));
}

/** The logging part of the validated configuration: LOG_LEVEL (pino's levels, by name) and MAX_LOG_BUFFER_BYTES. */
export interface LogSettings {
  logLevel: pino.LevelWithSilent;
  logBufferBytes: number;
}

export function configureLog({ logLevel, logBufferBytes }: LogSettings): void {
  logger.level = logLevel;
  setLogBufferBytes(logBufferBytes);
}

/**
 * The call shape used across the code base: `log.error('operation failed', { error })`. An `error`
 * field is serialised with its type, message and stack.
 */
export const log = {
  debug: (msg: string, fields: Fields = {}) => logger.debug(fields, msg),
  info: (msg: string, fields: Fields = {}) => logger.info(fields, msg),
  warn: (msg: string, fields: Fields = {}) => logger.warn(fields, msg),
  error: (msg: string, fields: Fields = {}) => logger.error(fields, msg),
};

tellDroppedLines((dropped) => log.warn('log lines dropped: stderr took no writes while MAX_LOG_BUFFER_BYTES were waiting', { dropped }));
