import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { SmsConfig } from '../config';
import { log } from '../log';
import type { ClaimedSms, SmsOutbox } from '../store/store';
import { GatewayError, type SmsGateway } from './gateways';
import { renderMessage } from './message';
import { smsMetrics } from './metrics';
import { maskPhone } from './validation';

type DispatcherOptions = Pick<SmsConfig, 'template' | 'maxAttempts' | 'retryBaseMs' | 'leaseMs' | 'pollMs' | 'retentionDays' | 'failedHoldMinutes'> & {
  /** The longest a send may take (the gateway's time-out); 0 for a gateway that does not wait. */
  sendTimeoutMs: number;
};

/** Messages claimed, and sent side by side, at a time. */
const BATCH = 10;
const TIDY_MS = 60_000;
const MAX_BACKOFF_MS = 3_600_000;
const DAY = 86_400_000;

/**
 * Sends what is due in the outbox. Each process runs one; they share the outbox through leases:
 * a claim takes rows no other dispatcher holds, for leaseMs, which is longer than any send may
 * take, so a message is sent by one dispatcher at a time, and a dead one's rows are taken over
 * when its leases end. A failed send is retried with exponential backoff and jitter.
 */
export class Dispatcher {
  /** Names the leases this dispatcher holds; unique per process and start. */
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private timer: NodeJS.Timeout | undefined;
  private tidyTimer: NodeJS.Timeout | undefined;
  private cycle: Promise<void> | null = null;
  private tidying: Promise<void> | null = null;
  private again = false;
  private running = false;
  private stopped: Promise<void> | null = null;

  constructor(
    private readonly outbox: SmsOutbox,
    private readonly gateway: SmsGateway,
    private readonly options: DispatcherOptions,
  ) {}

  start(): void {
    if (this.running || this.stopped !== null) return;
    this.running = true;
    this.wake();
    this.tidyNow();
    this.tidyTimer = setInterval(() => this.tidyNow(), TIDY_MS).unref();
  }

  /** Something was queued: look now rather than at the next poll. */
  wake(): void {
    if (!this.running) return;
    if (this.cycle !== null) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.cycle = this.run().finally(() => {
      this.cycle = null;
      if (!this.running) return;
      if (this.again) this.wake();
      else this.timer = setTimeout(() => this.wake(), this.options.pollMs).unref();
    });
  }

  /**
   * Stops for good: no new claim, the sends in flight finish and are recorded, rows claimed but not
   * yet sent are released for another dispatcher at once (not when their lease ends). Every call
   * returns the same promise.
   */
  stop(): Promise<void> {
    this.stopped ??= (async () => {
      this.running = false;
      clearTimeout(this.timer);
      clearInterval(this.tidyTimer);
      await Promise.all([this.cycle, this.tidying]);
    })();
    return this.stopped;
  }

  private async run(): Promise<void> {
    try {
      let claimed: ClaimedSms[];
      do {
        this.again = false;
        const now = new Date();
        const leaseEnd = now.getTime() + this.options.leaseMs;
        claimed = await this.outbox.claimDue(this.owner, now, new Date(leaseEnd), BATCH);
        // Stopped while the claim was under way: nothing of it is sent by this process.
        await Promise.all(claimed.map((m) => (this.running ? this.deliver(m, leaseEnd) : this.release(m))));
      } while (this.running && (claimed.length === BATCH || this.again));
    } catch (err) {
      log.warn('SMS dispatcher cannot read the outbox; trying again at the next poll', { error: (err as Error).message });
    }
  }

  private async deliver(m: ClaimedSms, leaseEnd: number): Promise<void> {
    const phone = maskPhone(m.phone);
    // A send may only start if it can end while the lease holds: after the lease another dispatcher
    // may claim the row and send it too. A process slowed down since its claim leaves the row as it is.
    if (Date.now() + this.options.sendTimeoutMs >= leaseEnd) {
      log.warn('SMS lease too short to send; left for the next claim', { id: m.id, phone });
      return this.release(m);
    }
    try {
      try {
        await this.gateway.send({ phone: m.phone, code: m.code, text: renderMessage(this.options.template, m.code) });
      } catch (err) {
        return await this.failed(m, err instanceof GatewayError ? err : new GatewayError((err as Error).message, true));
      }
      smsMetrics.sent.inc();
      const recorded = await this.outbox.markDelivered(m.id, this.owner, new Date());
      if (recorded) log.info('SMS delivered', { id: m.id, phone, attempt: m.attempts, gateway: this.gateway.name });
      else log.warn('SMS delivered after its lease ended', { id: m.id, phone });
    } catch (err) {
      // The outbox could not record the outcome: the lease ends and the row is tried again.
      log.error('SMS outcome not recorded', { id: m.id, phone, error: (err as Error).message });
    }
  }

  private async release(m: ClaimedSms): Promise<void> {
    try {
      await this.outbox.release(m.id, this.owner);
    } catch (err) {
      // Not lost: the lease ends and the row is claimed again.
      log.warn('SMS lease not released; the row waits for its lease to end', { id: m.id, error: (err as Error).message });
    }
  }

  private async failed(m: ClaimedSms, err: GatewayError): Promise<void> {
    const phone = maskPhone(m.phone);
    if (err.retryable && m.attempts < this.options.maxAttempts) {
      const delay = Math.min(this.options.retryBaseMs * 2 ** (m.attempts - 1), MAX_BACKOFF_MS) * (1 + Math.random() / 2);
      await this.outbox.scheduleRetry(m.id, this.owner, new Date(Date.now() + delay), err.message);
      smsMetrics.retries.inc();
      log.warn('SMS not sent; will retry', { id: m.id, phone, attempt: m.attempts, retryInMs: Math.round(delay), error: err.message });
      return;
    }
    await this.outbox.markFailed(m.id, this.owner, new Date(), err.message, this.options.failedHoldMinutes === 0);
    smsMetrics.failed.inc();
    log.error('SMS failed for good', { id: m.id, phone, attempts: m.attempts, error: err.message });
  }

  private tidyNow(): void {
    this.tidying ??= this.tidy().finally(() => (this.tidying = null));
  }

  /** Purges old delivered rows, erases the codes of failures past their hold, refreshes the outbox gauge. */
  private async tidy(): Promise<void> {
    try {
      const now = Date.now();
      const { purged, erased } = await this.outbox.tidy(
        new Date(now - this.options.retentionDays * DAY),
        new Date(now - this.options.failedHoldMinutes * 60_000),
      );
      if (purged + erased > 0) log.info('SMS outbox tidied', { purged, codesErased: erased });
      for (const [status, n] of Object.entries(await this.outbox.counts())) smsMetrics.outbox.set({ status }, n);
    } catch (err) {
      log.warn('SMS outbox not tidied', { error: (err as Error).message });
    }
  }
}
