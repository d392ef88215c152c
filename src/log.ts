/**
 * Structured log lines on stderr, one JSON object each. Internal details (stacks, SQL) go here and
 * only here; clients get the ASMX texts of errors.ts.
 */
type Fields = Record<string, unknown>;

const silent = process.env.LOG_LEVEL === 'silent';

function write(level: 'info' | 'warn' | 'error', msg: string, fields: Fields = {}): void {
  if (silent) return;
  const entry: Fields = { time: new Date().toISOString(), level, msg };
  for (const [k, v] of Object.entries(fields)) {
    entry[k] = v instanceof Error ? { message: v.message, stack: v.stack } : v;
  }
  process.stderr.write(JSON.stringify(entry) + '\n');
}

export const log = {
  info: (msg: string, fields?: Fields) => write('info', msg, fields),
  warn: (msg: string, fields?: Fields) => write('warn', msg, fields),
  error: (msg: string, fields?: Fields) => write('error', msg, fields),
};
