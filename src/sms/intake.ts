import { createHash } from 'node:crypto';
import { callerKey, canonicalAddress, inRanges } from '../address';
import type { SmsConfig } from '../config';
import { log } from '../log';
import type { Store } from '../store/store';
import type { Limiter } from './limits';
import { smsMetrics } from './metrics';
import { checkRequest, maskPhone, type RefusalReason } from './validation';

/** The same phone and code again within this time is the app retrying, not a new message. */
const DUPLICATE_MS = 2 * 60_000;
const HOUR = 3_600_000;

type Refusal = RefusalReason | 'duplicate' | 'limit';

/** A counter key that names no phone or code (they may be kept in Redis). */
const hashed = (value: string): string => createHash('sha256').update(value).digest('base64url').slice(0, 22);

/**
 * What AuthCode does with a request: check it, apply the limits, and queue it durably for the
 * dispatcher. A request that is refused is logged and counted and goes no further; the caller
 * cannot tell either way (the contract answers nothing), so a prober learns nothing.
 */
export class SmsIntake {
  constructor(
    private readonly config: SmsConfig,
    private readonly store: Store,
    private readonly limiter: Limiter,
    private readonly queued: () => void = () => undefined,
  ) {}

  async accept(code: string | null, phone: string | null, clientAddress: string | null): Promise<void> {
    const checked = checkRequest(code, phone, this.config);
    if (!checked.ok) return this.refuse(checked.reason, phone);
    if (!(await this.limiter.first(`dup:${hashed(`${checked.phone} ${checked.code}`)}`, DUPLICATE_MS))) {
      return this.refuse('duplicate', checked.phone);
    }
    // In this order, and each checked only when the one before passed: a request the per-phone limit
    // refuses does not use up its address's allowance or the global budget.
    const limits: [kind: string, key: string | null, limit: number, windowMs: number][] = [
      ['phone', hashed(checked.phone), this.config.perPhonePerHour, HOUR],
      ['address', this.addressKey(clientAddress), this.config.perAddressPerHour, HOUR],
      ['global', 'all', this.config.globalPerMinute, 60_000],
    ];
    for (const [kind, key, limit, windowMs] of limits) {
      if (key === null || (await this.limiter.hit(`${kind}:${key}`, limit, windowMs))) continue;
      smsMetrics.limited.inc({ kind });
      return this.refuse('limit', checked.phone, { limit: kind });
    }
    await this.store.enqueueAuthCode(checked.code, checked.phone);
    smsMetrics.accepted.inc();
    this.queued();
  }

  /** The per-address limit's key: none for an exempt caller, an IPv6 caller by its /64. */
  private addressKey(clientAddress: string | null): string | null {
    if (clientAddress === null) return null;
    const address = canonicalAddress(clientAddress);
    if (address === null) return hashed(clientAddress);
    return inRanges(address, this.config.limitExempt) ? null : hashed(callerKey(address));
  }

  private refuse(reason: Refusal, phone: string | null, fields: Record<string, string> = {}): void {
    smsMetrics.refused.inc({ reason });
    log.warn('AuthCode request not sent', { reason, ...fields, phone: maskPhone(phone) });
  }
}
