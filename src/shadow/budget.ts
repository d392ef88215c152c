/**
 * The bytes shadowing may hold (SHADOW_QUEUE_BYTES), kept on both sides of the copies' pipe: the
 * service takes a copy's bytes when it is offered and gives them back when the copier says it is
 * settled (compared or dropped); the copier takes them when the copy arrives and gives them back
 * when it settles it. A copy that does not fit is not taken: dropped and counted, never waited for,
 * so that a legacy host that never answers costs clients nothing and memory no more than this.
 * SHADOW_QUEUE counts copies; this counts what they weigh (one copy of a 4 MiB request weighs as
 * much as a thousand small ones).
 */
export class ByteBudget {
  private used = 0;

  constructor(readonly limit: number) {}

  /** Bytes taken and not yet given back. */
  get held(): number {
    return this.used;
  }

  /** Takes `bytes` if they fit beside what is held; false (nothing taken) if not. */
  take(bytes: number): boolean {
    if (this.used + bytes > this.limit) return false;
    this.used += bytes;
    return true;
  }

  give(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
  }

  /** Everything given back at once: the copies it was held for are gone (the copier ended). */
  clear(): void {
    this.used = 0;
  }
}

/** The most of one answer the copier reads, whatever SHADOW_QUEUE_BYTES allows: the service's largest answers are far smaller. */
export const MAX_ANSWER_CAP = 16 * 1024 * 1024;

/**
 * The most of one answer to a copy the copier reads (SHADOW_QUEUE_BYTES shared by the connections,
 * at most MAX_ANSWER_CAP): an answer beyond it is not read to its end nor compared, so that the
 * copier holds at most the copies' budget and one capped answer per connection (each reads one
 * answer at a time, pipelined or not, and keeps it only if it differs from the client's).
 */
export function answerCap(queueBytes: number, concurrency: number): number {
  return Math.min(MAX_ANSWER_CAP, Math.floor(queueBytes / concurrency));
}

/**
 * The bytes of lasting bodies (a cached roster's answer) the copier holds to compare copies against,
 * each sent to it once (frames.ts): a quarter of SHADOW_QUEUE_BYTES, at most 16 MiB, beside the copies.
 */
export function heldBodiesLimit(queueBytes: number): number {
  return Math.min(16 * 1024 * 1024, Math.floor(queueBytes / 4));
}
