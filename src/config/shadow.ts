import { ENDPOINTS } from '../contract/operations';
import { absoluteUrl, ConfigError, type Getter, oneOf, wholeNumber } from './parse';

/**
 * Shadow traffic: `service-first` answers clients itself and sends a copy of each request to the
 * legacy host; `legacy-first` is a front that answers clients from the legacy host and sends the copy
 * to this service. Either way the two answers are compared and each difference reported.
 */
export interface ShadowConfig {
  /** The legacy site root, virtual directory included, without a trailing slash. */
  url: string;
  /**
   * A second legacy site (the same old code on another host), or null: a difference from this
   * service that the two legacy answers also show between them is noise, counted apart from real
   * ones (Diffy's primary and secondary).
   */
  secondaryUrl: string | null;
  mode: ShadowMode;
  /** Connections to the target. */
  concurrency: number;
  /**
   * Copies on each connection at once: 1, one at a time; above, HTTP/1.1-pipelined (wire.ts), for a
   * legacy host known to answer pipelined requests in order, never with operations with effects.
   */
  pipeline: number;
  /** The share of requests copied, 0 to 1. */
  sample: number;
  /** How long a copy may take before it counts as unanswered. */
  timeoutMs: number;
  /** Copies waiting for a free slot; beyond this a copy is dropped (and counted). */
  queue: number;
  /**
   * The bytes copies may hold from their offer until settled, in the service and in its copier
   * each; a copy that does not fit is dropped (and counted). Shared by the copies in flight, it also
   * caps the answer the copier reads to each (at most 16 MiB).
   */
  queueBytes: number;
  /** The JSON-lines file each difference is appended to, or null for metrics only. */
  log: string | null;
  /**
   * The bytes the log may take on disk, its rotated files counted (shadow/log-file.ts): the oldest
   * file is deleted to make room, as logrotate and journald's SystemMaxUse do.
   */
  logMaxBytes: number;
  /**
   * The free space the log leaves on its file system: no line is written that would leave less
   * (journald's SystemKeepFree). Null: the larger of 256 MiB and 5% of the file system.
   */
  logKeepFree: number | null;
  /**
   * Lines written for each kind of difference (operation, binding, the kinds found) an hour, in
   * each process; the rest are counted, and their count written once the hour is over.
   */
  logExamples: number;
  /** Operations with effects that are copied all the same (only by name from the contract). */
  include: ReadonlySet<string>;
  /**
   * The copier's priority: `lowest` (SCHED_IDLE, basics/priority.ts), so that it never takes CPU
   * the clients want; `normal` for a machine busy with other work at all times, where the lowest
   * priority would leave the copies waiting until dropped (this project's tests, run side by side).
   */
  copierPriority: CopierPriority;
}

export const SHADOW_MODES = ['service-first', 'legacy-first'] as const;
export type ShadowMode = (typeof SHADOW_MODES)[number];
export const COPIER_PRIORITIES = ['lowest', 'normal'] as const;
export type CopierPriority = (typeof COPIER_PRIORITIES)[number];

/** Operations with effects (the contract marks them): never copied unless SHADOW_INCLUDE names them. */
const effectful = ENDPOINTS.flatMap((e) => e.operations.filter((o) => o.effects === true).map((o) => o.name));

export const SHADOW_SETTINGS = [
  'SHADOW_URL',
  'SHADOW_URL_SECONDARY',
  'SHADOW_MODE',
  'SHADOW_CONCURRENCY',
  'SHADOW_PIPELINE',
  'SHADOW_QUEUE',
  'SHADOW_QUEUE_BYTES',
  'SHADOW_SAMPLE',
  'SHADOW_TIMEOUT_MS',
  'SHADOW_LOG',
  'SHADOW_LOG_MAX_BYTES',
  'SHADOW_LOG_KEEP_FREE',
  'SHADOW_LOG_EXAMPLES',
  'SHADOW_INCLUDE',
  'SHADOW_COPIER_PRIORITY',
] as const;

/** Off without SHADOW_URL; the other SHADOW_ settings are validated either way, so a typo is caught early. */
export function loadShadow(get: Getter<(typeof SHADOW_SETTINGS)[number]>): ShadowConfig | null {
  const url = get('SHADOW_URL', '');
  const sample = get('SHADOW_SAMPLE', '1');
  if (!/^(0(\.\d+)?|1(\.0+)?|\.\d+)$/.test(sample.trim()))
    throw new ConfigError(`SHADOW_SAMPLE must be a number from 0 to 1, got "${sample}"`);
  const include = new Set<string>();
  for (const name of get('SHADOW_INCLUDE', '')
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '')) {
    const op = effectful.find((e) => e.toLowerCase() === name.toLowerCase());
    if (op === undefined)
      throw new ConfigError(`SHADOW_INCLUDE may only name operations with effects (${effectful.join(', ')}), got "${name}"`);
    include.add(op);
  }
  const log = get('SHADOW_LOG', './data/shadow-differences.jsonl');
  // At least 4 MiB: four times the room under which the SQLite store counts as full (store/writable.ts).
  const keepFree = get('SHADOW_LOG_KEEP_FREE', '');
  const secondary = get('SHADOW_URL_SECONDARY', '').trim();
  const secondaryUrl = secondary === '' ? null : absoluteUrl('SHADOW_URL_SECONDARY', secondary).replace(/\/+$/, '');
  if (secondaryUrl !== null && url === '') throw new ConfigError('SHADOW_URL_SECONDARY needs SHADOW_URL (the first legacy site)');
  if (secondaryUrl !== null && secondaryUrl === absoluteUrl('SHADOW_URL', url).replace(/\/+$/, ''))
    throw new ConfigError('SHADOW_URL_SECONDARY must be another legacy site than SHADOW_URL (the same one would call nothing noise)');
  const shadow: ShadowConfig = {
    url: url === '' ? '' : absoluteUrl('SHADOW_URL', url).replace(/\/+$/, ''),
    secondaryUrl,
    mode: oneOf('SHADOW_MODE', get('SHADOW_MODE', 'service-first'), SHADOW_MODES),
    concurrency: wholeNumber('SHADOW_CONCURRENCY', get('SHADOW_CONCURRENCY', '4'), 1, 1000),
    pipeline: wholeNumber('SHADOW_PIPELINE', get('SHADOW_PIPELINE', '1'), 1, 64),
    sample: Number(sample),
    timeoutMs: wholeNumber('SHADOW_TIMEOUT_MS', get('SHADOW_TIMEOUT_MS', '5000'), 1, 3_600_000),
    queue: wholeNumber('SHADOW_QUEUE', get('SHADOW_QUEUE', '1000'), 0, 1_000_000),
    // At least 1 MiB: room for the service's largest answers (a 500-student roster) with their requests.
    queueBytes: wholeNumber('SHADOW_QUEUE_BYTES', get('SHADOW_QUEUE_BYTES', String(64 * 1024 * 1024)), 1024 * 1024, 999_999_999),
    log: log.trim() === '' ? null : log,
    // At least 1 MiB: a few of the longest lines (three bodies of 64 KB) in each of its files.
    logMaxBytes: wholeNumber('SHADOW_LOG_MAX_BYTES', get('SHADOW_LOG_MAX_BYTES', String(64 * 1024 * 1024)), 1024 * 1024, 999_999_999),
    logKeepFree: keepFree.trim() === '' ? null : wholeNumber('SHADOW_LOG_KEEP_FREE', keepFree, 4 * 1024 * 1024, 999_999_999),
    logExamples: wholeNumber('SHADOW_LOG_EXAMPLES', get('SHADOW_LOG_EXAMPLES', '10'), 1, 1_000_000),
    include,
    copierPriority: oneOf('SHADOW_COPIER_PRIORITY', get('SHADOW_COPIER_PRIORITY', 'lowest'), COPIER_PRIORITIES),
  };
  // A pipelined copy on a connection lost before its answer is sent again: never one with effects.
  if (shadow.pipeline > 1 && include.size > 0)
    throw new ConfigError(
      'SHADOW_PIPELINE above 1 cannot be used with SHADOW_INCLUDE (a copy of an operation with effects is never sent twice)',
    );
  return url === '' ? null : shadow;
}
