/**
 * The SMS outbox for an operator, on whichever store is configured:
 *   npm run outbox -- --list [--failed] [--limit N]   newest first; phones in full, codes never shown
 *   npm run outbox -- --retry ID                       send this message again (attempts start over)
 *   npm run outbox -- --retry-failed                   every failed message that still has its code
 * Exit codes: 0 done, 1 storage or configuration problem or nothing to retry, 2 usage.
 */
import { ConfigError, loadConfig, settingWarnings } from '../src/config';
import { openStore, StoreOpenError } from '../src/store/open';
import type { OutboxRecord, Store } from '../src/store/store';
import { runMain } from './run-main';

export const USAGE = 'usage: npm run outbox -- --list [--failed] [--limit N] | --retry ID | --retry-failed';

export interface OutboxIo {
  out(line: string): void;
  err(line: string): void;
  env: Record<string, string | undefined>;
}

type Command = { kind: 'list'; failed: boolean; limit: number } | { kind: 'retry'; id: number | null };

function parseArgs(argv: readonly string[]): Command | null {
  const [first, ...rest] = argv;
  if (first === '--list') {
    let failed = false;
    let limit = 50;
    for (let i = 0; i < rest.length; i += 1) {
      if (rest[i] === '--failed') failed = true;
      else if (rest[i] === '--limit' && /^[1-9]\d{0,5}$/.test(rest[i + 1] ?? '')) limit = Number(rest[(i += 1)]);
      else return null;
    }
    return { kind: 'list', failed, limit };
  }
  if (first === '--retry' && rest.length === 1 && /^[1-9]\d{0,15}$/.test(rest[0]!)) return { kind: 'retry', id: Number(rest[0]) };
  if (first === '--retry-failed' && rest.length === 0) return { kind: 'retry', id: null };
  return null;
}

const cell = (v: string | number | null): string => (v === null ? '-' : String(v));

function row(r: OutboxRecord): string {
  const when = r.status === 'delivered' ? r.deliveredAt : r.status === 'pending' ? r.nextAttemptAt : r.failedAt;
  const code = r.status === 'failed' && !r.hasCode ? ' (code erased: cannot be retried)' : '';
  return [r.id, r.status, r.phone, r.attempts, r.createdAt, when, `${cell(r.lastError)}${code}`].map(cell).join('\t');
}

export async function main(argv: readonly string[], io: OutboxIo = processIo()): Promise<number> {
  const command = parseArgs(argv);
  if (command === null) {
    io.err(USAGE);
    return 2;
  }
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
