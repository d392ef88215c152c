import pino from 'pino';
import pretty from 'pino-pretty';
import type { LogLevel } from '../config';

/**
 * Structured log lines on stderr: one JSON object each (pino), or pino-pretty's lines when stderr is
 * a terminal. Internal details (stacks, SQL) go here and only here; clients get the ASMX texts of
 * errors.ts. Nothing secret reaches a line: values under the keys below are removed, phone numbers
 * are masked, and the request line carries no parameters.
 */
export type Fields = Record<string, unknown>;

/**
 * `code` is AuthCode's parameter; only where a parameter would be logged, since errors carry their
 * own `code` (ENOENT, SQLITE_BUSY) which is useful.
 */
const SECRET_PATHS = ['code', 'params.code', 'args.code', ...['token', 'secret', 'password', 'serverKey', 'authorization'].flatMap((k) => [k, `*.${k}`])];

/**
 * A phone for logs, `+96477****567`: country code and operator prefix, four stars whatever the
 * length, the last three digits; enough for an operator to tell numbers apart without reading them.
 * A value masked already is left as it is (fields are masked where logged and again by the logger).
 */
export function maskPhone(phone: unknown): string {
  if (phone === null || phone === undefined) return '(none)';
  const text = String(phone);
  if (text.includes('****')) return text;
  const digits = text.replace(/[^\d+]/g, '').slice(0, 20);
  if (digits.length < 10) return '****';
  return `${digits.slice(0, 6)}****${digits.slice(-3)}`;
}

const options: pino.LoggerOptions = {
  // The level is set from the validated configuration at start (setLogLevel); until then, info.
  level: 'info',
  base: { pid: process.pid },
  timestamp: pino.stdTimeFunctions.isoTime,
  formatters: { level: (label) => ({ level: label }) },
  serializers: { error: pino.stdSerializers.err, err: pino.stdSerializers.err },
  redact: {
    paths: [...SECRET_PATHS, 'phone', '*.phone'],
    censor: (value, path) => (path[path.length - 1] === 'phone' ? maskPhone(value) : '[redacted]'),
  },
};

// Writes to a pipe or file are asynchronous; pino flushes what is pending when the process exits.
const destination = process.stderr.isTTY
  ? pretty({ destination: 2, sync: true, colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' })
  : pino.destination({ dest: 2, sync: false });

/** pino itself, for code that wants its API (child loggers, `isLevelEnabled`). */
export const logger: pino.Logger = pino(options, destination);

/**
 * The one line per request (request-hooks.ts), on the same destination and level but without
 * redaction: its fields are fixed and hold no parameter value, and redacting them was a tenth of
 * the cost of a small request.
 */
export const requestLogger: pino.Logger = pino({ ...options, redact: undefined }, destination);

export function setLogLevel(level: LogLevel): void {
  logger.level = level;
  requestLogger.level = level;
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
