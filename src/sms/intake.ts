import { createHash } from 'node:crypto';
import { callerKey, canonicalAddress, inRanges } from '../basics/address';
import type { SmsConfig } from '../config';
import { log } from '../basics/log';
import type { EnqueueOutcome, LimitCheck, Store } from '../store/store';
import type { Limiter } from './limits';
import { smsMetrics } from './metrics';
import { checkRequest, type RefusalReason } from './validation';

/** The same phone and code again within this time is the app retrying, not a new message. */
const DUPLICATE_MS = 2 * 60_000;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

type Refusal = RefusalReason | 'duplicate' | 'limit';

/** A counter key that names no phone, code or address (they are kept in the store, and may be in Redis). */
const hashed = (value: string): string => createHash('sha256').update(value).digest('base64url').slice(0, 22);

/**
 * What AuthCode does with a request: check it, then hand it to the store with its limits, which
 * decides and queues it in one transaction (outbox.ts): the same phone and code again within two
 * minutes (the app retrying), per phone, per caller, and the global budgets, in that order. A
 * request that is refused is logged and counted and goes no further; the caller cannot tell either
 * way (the contract answers nothing), so a prober learns nothing.
 *
 * A refused request counts nothing and stores nothing, and one the store fails to save counts
 * nothing either (the transaction is rolled back) and fails (the caller gets a fault), so that the
 * app's retry is queued. The limiter only remembers windows the store reported full, so that a flood
 * of requests the store would refuse is refused without it.
 */
export class SmsIntake {
  constructor(
    private readonly config: SmsConfig,
    private readonly store: Store,
    private readonly limiter: Limiter,
    private readonly queued: () => void = () => undefined,
  ) {}

  /** `reqId`: the request's, for the lines logged about it. */
  async accept(code: string | null, phone: string | null, clientAddress: string | null, reqId?: string): Promise<void> {
    const request = reqId === undefined ? {} : { reqId };
    const checked = checkRequest(code, phone, this.config);
    if (!checked.ok) return this.refuse(request, checked.reason, phone);
    const address = this.addressKey(clientAddress);
    const checks: LimitCheck[] = [
      // The duplicate mark: one per phone and code in two minutes.
      { kind: 'duplicate', key: `dup:${hashed(`${checked.phone} ${checked.code}`)}`, limit: 1, windowMs: DUPLICATE_MS },
      { kind: 'phone', key: `phone:${hashed(checked.phone)}`, limit: this.config.perPhonePerHour, windowMs: HOUR },
      ...(address === null ? [] : [{ kind: 'address', key: `address:${address}`, limit: this.config.perAddressPerHour, windowMs: HOUR }]),
      { kind: 'global', key: 'global:all', limit: this.config.globalPerMinute, windowMs: MINUTE },
      { kind: 'global_hour', key: 'global_hour:all', limit: this.config.globalPerHour, windowMs: HOUR },
      { kind: 'global_day', key: 'global_day:all', limit: this.config.globalPerDay, windowMs: DAY },
    ];
    // Best effort: a limiter that fails (Redis gone) only sends the request to the store.
    const known = await this.limiter.knownFull(checks).catch(() => null);
    if (known !== null) return this.refused(request, known, checked.phone);
    let outcome: EnqueueOutcome;
    try {
      outcome = await this.store.outbox.enqueue(checked.code, checked.phone, checks);
    } catch (err) {
      smsMetrics.saveFailed.inc();
      // A warning: the request's own error line (the fault, with the stack) follows.
      log.warn('AuthCode request not queued: the store failed; it counted nothing, so the retry the fault prompts is queued', {
        ...request,
        phone: checked.phone,
        error: (err as Error).message,
      });
      throw err;
    }
    await this.limiter.remember(outcome.full).catch(() => undefined);
    if (outcome.refusedBy !== null) return this.refused(request, outcome.refusedBy, checked.phone);
    smsMetrics.accepted.inc();
    this.queued();
  }

  private refused(request: { reqId?: string }, by: LimitCheck, phone: string): void {
    if (by.kind === 'duplicate') return this.refuse(request, 'duplicate', phone);
    smsMetrics.limited.inc({ kind: by.kind });
    this.refuse(request, 'limit', phone, { limit: by.kind });
  }

  /** The per-address limit's key: none for an exempt caller, an IPv6 caller by its /64. */
  private addressKey(clientAddress: string | null): string | null {
    if (clientAddress === null) return null;
    const address = canonicalAddress(clientAddress);
    if (address === null) return hashed(clientAddress);
    return inRanges(address, this.config.limitExempt) ? null : hashed(callerKey(address));
  }

  private refuse(request: { reqId?: string }, reason: Refusal, phone: string | null, fields: Record<string, string> = {}): void {
    smsMetrics.refused.inc({ reason });
    log.warn('AuthCode request not sent', { ...request, reason, ...fields, phone });
  }
}
