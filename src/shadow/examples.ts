import { createHash } from 'node:crypto';
import { groupDigits } from '../basics/digits';
import type { Outcome } from './log-file';

/**
 * Examples per kind of difference: of the requests that differ the same way (operation, binding,
 * noise or not, and the set of difference kinds), at most SHADOW_LOG_EXAMPLES an hour have a line
 * in the log; the others are counted, and once the hour is over one line per kind says how many
 * were not written, and why (journald's RateLimitBurst per RateLimitIntervalSec, then "Suppressed
 * N messages"). So a flood of one difference costs the log a few lines an hour, and a new kind
 * still gets its examples beside it: rotation alone would keep only the flood.
 */

/** What makes two differences the same kind. */
export interface KindOf {
  operation: string;
  binding: string;
  noise: boolean;
  /** Each kind once, sorted. */
  kinds: string[];
}

/** Why lines were not written: `examples` (past the kind's examples this hour), or what the log's writer answered. */
export type NotWritten = Partial<Record<Exclude<Outcome, 'written'> | 'examples', number>>;

/** One kind's lines not written, as the log's tally line says it. */
export interface Tally extends KindOf {
  /** When the first of them was counted (ISO). */
  since: string;
  notWritten: NotWritten;
}

export const EXAMPLES_WINDOW_MS = 60 * 60 * 1000;
/** Kinds told apart in an hour; past them the set of kinds is not looked at (the operation and binding still are). */
export const MAX_KINDS = 1000;
/** A kind kept this long at most (a kind names a place in an answer; the legacy host's answers are not ours). */
const KIND_CHARS = 300;
export const OTHER_KINDS = `(more than ${groupDigits(MAX_KINDS)} kinds this hour)`;

interface Seen {
  kind: KindOf;
  written: number;
  since: number;
  notWritten: NotWritten;
}

export function kindOf(operation: string, binding: string, noise: boolean, kinds: readonly string[]): KindOf {
  return { operation, binding, noise, kinds: [...new Set(kinds.map((k) => k.slice(0, KIND_CHARS)))].sort() };
}

/** A kind's key: hashed, so that what is kept per kind is small whatever the kinds say. */
const keyOf = (k: KindOf) =>
  createHash('sha1')
    .update(JSON.stringify([k.operation, k.binding, k.noise, k.kinds]))
    .digest('base64');

export class Examples {
  private seen = new Map<string, Seen>();
  private start: number;

  constructor(
    private readonly perHour: number,
    private readonly now: () => number = Date.now,
  ) {
    this.start = now();
  }

  /** Whether a difference of this kind gets a line (one of its examples this hour); if not, it is counted. */
  take(kind: KindOf): boolean {
    const seen = this.entry(kind);
    if (seen.written < this.perHour) {
      seen.written++;
      return true;
    }
    count(seen, 'examples', 1);
    return false;
  }

  /** A line of this kind that was to be written and was not: counted for its tally. */
  missed(kind: KindOf, why: Exclude<Outcome, 'written'>): void {
    count(this.entry(kind), why, 1);
  }

  /** A tally that could not be written: its counts go with the next. */
  carry(tally: Tally): void {
    const seen = this.entry({ operation: tally.operation, binding: tally.binding, noise: tally.noise, kinds: tally.kinds });
    seen.since = Math.min(seen.since, Date.parse(tally.since));
    for (const [why, n] of Object.entries(tally.notWritten)) count(seen, why as keyof NotWritten, n);
  }

  /**
   * Once the hour is over (or `now`, at a stop): the tallies of the kinds with lines not written,
   * and a new hour, every kind's examples again.
   */
  roll(now = false): Tally[] {
    const at = this.now();
    if (!now && at - this.start < EXAMPLES_WINDOW_MS) return [];
    const tallies: Tally[] = [];
    for (const { kind, since, notWritten } of this.seen.values()) {
      if (Object.keys(notWritten).length > 0) tallies.push({ ...kind, since: new Date(since).toISOString(), notWritten });
    }
    this.seen = new Map();
    this.start = at;
    return tallies;
  }

  private entry(kind: KindOf): Seen {
    let key = keyOf(kind);
    let seen = this.seen.get(key);
    if (seen !== undefined) return seen;
    if (this.seen.size >= MAX_KINDS) {
      kind = { operation: kind.operation, binding: kind.binding, noise: kind.noise, kinds: [OTHER_KINDS] };
      key = keyOf(kind);
      seen = this.seen.get(key);
      if (seen !== undefined) return seen;
    }
    seen = { kind, written: 0, since: this.now(), notWritten: {} };
    this.seen.set(key, seen);
    return seen;
  }
}

function count(seen: Seen, why: keyof NotWritten, n: number): void {
  seen.notWritten[why] = (seen.notWritten[why] ?? 0) + n;
}
