import type { StudentInfo } from '../contract/types';

/** A row of the students table, as imported. */
export interface StudentRow extends StudentInfo {
  school_base_url: string;
}

/** A row of the devices table, as imported. */
export interface DeviceRow {
  id_device: string;
  token: string;
}

export type SmsStatus = 'pending' | 'delivered' | 'failed' | 'expired';

/** A message one dispatcher has claimed: no other may send it until the lease ends. */
export interface ClaimedSms {
  id: number;
  code: string;
  phone: string;
  /** Including this one. */
  attempts: number;
  createdAt: string;
  /** Set when an earlier attempt reached the provider and its answer was lost: this one is a resend. */
  sendStartedAt: string | null;
}

/** An outbox row as an operator sees it: never the code, only whether it is still kept. */
export interface OutboxRecord {
  id: number;
  phone: string | null;
  status: SmsStatus;
  attempts: number;
  createdAt: string;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  /** When it ended undelivered: failed, or expired. */
  failedAt: string | null;
  lastError: string | null;
  hasCode: boolean;
}

/**
 * One limit an AuthCode must fit: at most `limit` requests queued under `key` in a window of
 * `windowMs` that starts at the key's first queued request. `key` names no phone, code or address
 * (the intake hashes them); `kind` is what a refusal is logged and counted as.
 */
export interface LimitCheck {
  kind: string;
  key: string;
  limit: number;
  windowMs: number;
}

/**
 * A window at or past a limit: `key` has at least `hits` queued until `until` (epoch ms). Nothing
 * takes a hit back, so this stays true until then, whatever happens: a cache may keep it.
 */
export interface FullWindow {
  key: string;
  hits: number;
  until: number;
}

/** What became of an AuthCode the outbox was given. */
export interface EnqueueOutcome {
  /** null: queued (durable). Else the first of its checks it would have exceeded: nothing was stored. */
  refusedBy: LimitCheck | null;
  /** The windows of its checks now known to be at their limit. */
  full: FullWindow[];
}

/**
 * The AuthCode outbox as the SMS intake, its dispatcher and the outbox command use it (outbox.ts, the same SQL
 * on both stores). Every change to a claimed row names its lease owner and is false when the lease
 * was no longer the owner's: a dispatcher whose lease was taken over changes nothing.
 */
export interface SmsOutbox {
  /**
   * Keeps an AuthCode request until it is delivered, if it fits every one of `checks` (in order):
   * the checks, their windows' new counts and the row are one transaction, run one at a time across
   * every process and instance on the database. A refused request stores nothing; a request whose
   * save fails counts nothing. Resolves once the outcome is durable.
   */
  enqueue(code: string, phone: string, checks?: readonly LimitCheck[]): Promise<EnqueueOutcome>;
  /** Atomically leases up to `limit` pending rows that are due, not leased, and created after `createdAfter`. */
  claimDue(owner: string, now: Date, leaseUntil: Date, limit: number, createdAfter: Date): Promise<ClaimedSms[]>;
  /**
   * Recorded before the provider is called (a claimed batch at once): a claim that finds it set knows
   * that an earlier send's answer was lost. The ids whose lease was still the owner's.
   */
  markStarted(ids: readonly number[], owner: string, at: Date): Promise<number[]>;
  /**
   * A started row that was not sent after all (its lease ran out before the provider was called):
   * released as release() does, its send start put back to `earlierStart` (what its claim found), so
   * the next claim does not take it for a lost answer.
   */
  unstart(id: number, owner: string, earlierStart: string | null): Promise<boolean>;
  /** Delivered: the code is erased. */
  markDelivered(id: number, owner: string, at: Date): Promise<boolean>;
  /** Gives back a claimed row that was never sent: pending, unleased, its attempt not counted. */
  release(id: number, owner: string): Promise<boolean>;
  /** Due again at `at`; with `answerLost` the send may have gone out, and the next one is a resend. */
  scheduleRetry(id: number, owner: string, at: Date, error: string, answerLost: boolean): Promise<boolean>;
  /** Failed for good after the last attempt; with `eraseCode` the code goes at once. */
  markFailed(id: number, owner: string, at: Date, error: string, eraseCode: boolean): Promise<boolean>;
  /** A claimed row whose code expired before it could be sent: expired, code erased. */
  markExpired(id: number, owner: string, at: Date, reason: string): Promise<boolean>;
  /** Up to `limit` unleased pending rows created before `createdBefore` expire; how many. */
  expire(createdBefore: Date, now: Date, reason: string, limit: number): Promise<number>;
  /** Newest first. */
  list(onlyFailed: boolean, limit: number): Promise<OutboxRecord[]>;
  /**
   * Makes a row that still has its code, created after `createdAfter` (its code still valid), pending
   * and due at `at` (one, or with null every failed one); how many.
   */
  retry(id: number | null, at: Date, createdAfter: Date): Promise<number>;
  /** Deletes up to `limit` of the oldest delivered, failed or expired rows created before `createdBefore`. */
  purge(createdBefore: Date, limit: number): Promise<number>;
  /** Deletes up to `limit` limit windows that ended at or before `now` (they count nothing); how many. */
  purgeWindows(now: Date, limit: number): Promise<number>;
  /** Erases the codes of failed rows that failed before `failedBefore` or were created before `createdBefore`. */
  eraseFailedCodes(failedBefore: Date, createdBefore: Date): Promise<number>;
  counts(): Promise<Record<SmsStatus, number>>;
  /** When the oldest pending message was queued (how far sending is behind), or null when none waits. */
  oldestPending(): Promise<string | null>;
}

/** Rows of each table a school system fills. */
export interface RowCounts {
  students: number;
  devices: number;
}

export interface ImportCounts extends RowCounts {
  /** Students removed by a replacing import (absent from the file, in a school it names). */
  removed: number;
}

/** A staged row, with the line of the file it came from for error messages. */
export type Staged<T> = T & { line: number };

/** A later row whose key an earlier row of the same file already had. */
export interface Duplicate {
  line: number;
  first: number;
  key: string[];
}

/**
 * One import: rows are staged in batches (nothing bigger than a batch is held in memory), checked,
 * then merged into the tables at commit, or all dropped by rollback. PostgreSQL merges in the one
 * transaction; SQLite in short transactions of its own (sqlite-import.ts), so a failed merge there
 * may leave part done (ImportStoppedError) for a rerun to complete.
 */
export interface ImportSession {
  stageStudents(rows: readonly Staged<StudentRow>[]): Promise<void>;
  stageDevices(rows: readonly Staged<DeviceRow>[]): Promise<void>;
  /** The first `limit` duplicate keys of each table, in line order, and how many there are in all. */
  duplicates(limit: number): Promise<{ students: Duplicate[]; devices: Duplicate[]; total: number }>;
  /** Upserts the staged rows; with `replace`, the file's schools lose the students it does not list. */
  commit(replace: boolean): Promise<ImportCounts>;
  rollback(): Promise<void>;
}

/** Shadow traffic's totals across restarts: what the cut-over verdict counts, since the first comparison. */
export interface ShadowTotals {
  /** When the first request was compared (ISO), or null before any. */
  since: string | null;
  compared: number;
  real: number;
  noise: number;
}

/** Comparisons settled together, added to the totals: `first`, when the first of them settled (ISO). */
export const NO_TOTALS: ShadowTotals = Object.freeze({ since: null, compared: 0, real: 0, noise: 0 });

export type ShadowBatch = Omit<ShadowTotals, 'since'> & { first: string };

/**
 * What the services and the import need from storage: SQLite (sqlite.ts) or PostgreSQL
 * (postgres.ts), chosen by `openStore` (open.ts). Every query behind it is parameterised.
 */
export interface Store {
  /** Where the data is, for messages: a file path or a URL without its password. */
  readonly location: string;
  /** Students of a school whose ShowActive equals `showActive`, ordered by id_student. */
  studentsOf(schoolBaseUrl: string | null, showActive: string): Promise<StudentInfo[]>;
  /** The token of a device, or null when there is none. */
  deviceToken(idDevice: string | null): Promise<string | null>;
  readonly outbox: SmsOutbox;
  beginImport(): Promise<ImportSession>;
  /**
   * Resolves when the store answers, its schema is one this program runs on, and it takes writes: a
   * heartbeat written and committed at most a second ago, or a probe begun now (health.ts); rejects
   * with the reason otherwise. Cheap: readiness probes call it every few seconds.
   */
  ping(): Promise<void>;
  /** How many rows the store holds, for the start line. */
  counts(): Promise<RowCounts>;
  /** Shadow traffic's totals (all zero, since null, before any comparison). */
  shadowTotals(): Promise<ShadowTotals>;
  /** Adds settled comparisons to the totals; resolves once committed. */
  addShadowTotals(batch: ShadowBatch): Promise<void>;
  /** A pooled store's connections, for the metrics; absent when there is no pool. */
  poolUsage?(): PoolUsage;
  close(): Promise<void>;
}

export interface PoolUsage {
  total: number;
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
}
