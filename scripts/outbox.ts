/**
 * The SMS outbox for an operator, on whichever store is configured:
 *   npm run outbox -- --list [--failed] [--limit N]   newest first; phones in full, codes never shown
 *   npm run outbox -- --retry ID                       send this message again (attempts start over)
 *   npm run outbox -- --retry-failed                   every failed message that still has its code
 * Exit codes: 0 done, 1 storage or configuration problem or nothing to retry, 2 usage.
 */
import '../src/basics/supported-node';
import { type CommandIo, type CommandSpec, parseCommandLine, usageError, type Values } from '../src/basics/command-line';
import { ConfigError, loadConfig, settingWarnings } from '../src/config';
import { openStore, StoreOpenError } from '../src/store/open';
import type { OutboxRecord, Store } from '../src/store/store';
import { runMain } from './run-main';

export const COMMAND = {
  usage: ['npm run outbox -- --list [--failed] [--limit N]', 'npm run outbox -- --retry ID', 'npm run outbox -- --retry-failed'],
  summary: [
    'The SMS outbox of the configured store: messages newest first (phones in full, codes never shown),',
    'or failed ones queued to be sent again.',
  ],
  options: {
    list: { type: 'boolean', help: 'the messages, newest first, as tab-separated lines' },
    failed: { type: 'boolean', help: 'with --list: only the failed ones' },
    limit: { type: 'integer', min: 1, max: 999_999, help: 'with --list: at most N messages (default 50)' },
    retry: {
      type: 'integer',
      value: 'ID',
      min: 1,
      max: Number.MAX_SAFE_INTEGER,
      help: 'send this failed message again (its attempts start over)',
    },
    'retry-failed': { type: 'boolean', help: 'send again every failed message that still has its code' },
  },
  notes: ['exit codes: 0 done, 1 storage or configuration problem or nothing to retry, 2 usage'],
} as const satisfies CommandSpec;

export interface OutboxIo extends CommandIo {
  env: Record<string, string | undefined>;
}

type Command = { kind: 'list'; failed: boolean; limit: number } | { kind: 'retry'; id: number | null };

/** Exactly one of --list, --retry and --retry-failed; --failed and --limit only with --list. */
function commandOf(values: Values<typeof COMMAND>): Command | string {
  const chosen = (['list', 'retry', 'retry-failed'] as const).filter((k) => values[k] !== undefined);
  if (chosen.length !== 1)
    return chosen.length === 0
      ? 'say what to do: --list, --retry ID or --retry-failed'
      : `--${chosen[0]} and --${chosen[1]} do not go together`;
  if (chosen[0] !== 'list' && (values.failed !== undefined || values.limit !== undefined))
    return '--failed and --limit go with --list only';
  if (chosen[0] === 'list') return { kind: 'list', failed: values.failed === true, limit: values.limit ?? 50 };
  return { kind: 'retry', id: values.retry ?? null };
}

const cell = (v: string | number | null): string => (v === null ? '-' : String(v));

function row(r: OutboxRecord): string {
  const when = r.status === 'delivered' ? r.deliveredAt : r.status === 'pending' ? r.nextAttemptAt : r.failedAt;
  const code = r.status === 'failed' && !r.hasCode ? ' (code erased: cannot be retried)' : '';
  return [r.id, r.status, r.phone, r.attempts, r.createdAt, when, `${cell(r.lastError)}${code}`].map(cell).join('\t');
}

export async function main(argv: readonly string[], io: OutboxIo = processIo()): Promise<number> {
  const line = parseCommandLine(COMMAND, argv, io);
  if (typeof line === 'number') return line;
  const command = commandOf(line.values);
  if (typeof command === 'string') return usageError(COMMAND, command, io);
  // As the service says them: a misspelt DATABASE_URL would list SQLite's outbox in silence.
  for (const line of settingWarnings(io.env)) io.err(`warning: ${line}`);
  let store: Store | undefined;
  try {
    const config = loadConfig(io.env);
    store = await openStore(config);
    if (command.kind === 'list') {
      io.out(['id', 'status', 'phone', 'attempts', 'created', 'next/delivered/ended', 'last error'].join('\t'));
      for (const r of await store.outbox.list(command.failed, command.limit)) io.out(row(r));
      return 0;
    }
    // A code past its lifetime is useless to the parent: it is not sent again.
    const validSince = new Date(Date.now() - config.sms.codeTtlSeconds * 1000);
    const n = await store.outbox.retry(command.id, new Date(), validSince);
    if (command.id !== null && n === 0) {
      io.err(`error: message ${command.id} cannot be sent again: it does not exist, was delivered, or its code has expired or been erased`);
      return 1;
    }
    io.out(`${n} message${n === 1 ? '' : 's'} queued again; a running service sends ${n === 1 ? 'it' : 'them'} at its next poll`);
    return 0;
  } catch (err) {
    if (err instanceof ConfigError || err instanceof StoreOpenError) io.err(`error: ${err.message}`);
    else io.err(`error: ${(err as Error).message}`);
    return 1;
  } finally {
    await store?.close();
  }
}

function processIo(): OutboxIo {
  return { out: (l) => process.stdout.write(`${l}\n`), err: (l) => process.stderr.write(`${l}\n`), env: process.env };
}

if (require.main === module) runMain((argv) => main(argv));
