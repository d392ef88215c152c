import { createHash } from 'node:crypto';
import { callerKey, canonicalAddress, inRanges } from '../basics/address';
import type { SmsConfig } from '../config';
import { log } from '../basics/log';
import type { Store } from '../store/store';
import type { Limiter } from './limits';
import { smsMetrics } from './metrics';
import { checkRequest, type RefusalReason } from './validation';

/** The same phone and code again within this time is the app retrying, not a new message. */
const DUPLICATE_MS = 2 * 60_000;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

type Refusal = RefusalReason | 'duplicate' | 'limit';

/** A counter key that names no phone or code (they may be kept in Redis). */
const hashed = (value: string): string => createHash('sha256').update(value).digest('base64url').slice(0, 22);

/**
 * What AuthCode does with a request: check it, apply the limits, and queue it durably for the
 * dispatcher. A request that is refused is logged and counted and goes no further; the caller
 * cannot tell either way (the contract answers nothing), so a prober learns nothing.
 *
 * A request uses up allowances only once it is queued: one refused by a limit gives back what the
 * limits before it counted, and one the store fails to save gives back everything, its duplicate
 * mark included, and fails (the caller gets a fault), so that the app's retry is queued.
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
    const duplicate = `dup:${hashed(`${checked.phone} ${checked.code}`)}`;
    if (!(await this.limiter.first(duplicate, DUPLICATE_MS))) return this.refuse(request, 'duplicate', checked.phone);
    const taken: (() => Promise<void>)[] = [() => this.limiter.forget(duplicate)];
    // In this order, and each checked only when the one before passed: a request the per-phone limit
    // refuses does not use up its address's allowance or the global budgets.
    const limits: [kind: string, key: string | null, limit: number, windowMs: number][] = [
      ['phone', hashed(checked.phone), this.config.perPhonePerHour, HOUR],
      ['address', this.addressKey(clientAddress), this.config.perAddressPerHour, HOUR],
      ['global', 'all', this.config.globalPerMinute, MINUTE],
      ['global_hour', 'all', this.config.globalPerHour, HOUR],
      ['global_day', 'all', this.config.globalPerDay, DAY],
    ];
    try {
      for (const [kind, key, limit, windowMs] of limits) {
        if (key === null) continue;
        const counter = `${kind}:${key}`;
        if (await this.limiter.hit(counter, limit, windowMs)) {
          taken.push(() => this.limiter.unhit(counter));
          continue;
        }
        await this.giveBack(taken.slice(1));
        smsMetrics.limited.inc({ kind });
        return this.refuse(request, 'limit', checked.phone, { limit: kind });
      }
      await this.store.outbox.enqueue(checked.code, checked.phone);
    } catch (err) {
      await this.giveBack(taken);
      smsMetrics.saveFailed.inc();
      // A warning: the request's own error line (the fault, with the stack) follows.
      log.warn('AuthCode request not queued: the store failed; its allowances are given back, so the retry the fault prompts is queued', {
        ...request,
        phone: checked.phone,
        error: (err as Error).message,
      });
      throw err;
    }
    smsMetrics.accepted.inc();
    this.queued();
  }

  /** Best effort: a limiter that fails here (Redis gone) costs an allowance, never the request. */
  private async giveBack(taken: (() => Promise<void>)[]): Promise<void> {
    for (const undo of taken) await undo().catch(() => undefined);
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
