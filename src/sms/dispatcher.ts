import { createHash, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { SmsConfig } from '../config';
import { log } from '../basics/log';
import type { ClaimedSms, SmsOutbox } from '../store/store';
import { GatewayError, type SmsGateway } from './gateways';
import { renderMessage } from './message';
import { smsMetrics } from './metrics';

type DispatcherOptions = Pick<
  SmsConfig,
  'template' | 'maxAttempts' | 'retryBaseMs' | 'leaseMs' | 'pollMs' | 'failedHoldMinutes' | 'codeTtlSeconds'
> & {
  /** The longest a send may take (the gateway's time-out); 0 for a gateway that does not wait. */
  sendTimeoutMs: number;
};

/** Messages claimed, and sent side by side, at a time. */
const BATCH = 10;
const MAX_BACKOFF_MS = 3_600_000;
/** How long an outcome the outbox would not take is tried again: store blips, not outages. */
const RECORD_RETRY_MS = 5000;

/** The message's key for the provider: the same on every attempt and in every process, and opaque. */
export const messageKey = (m: Pick<ClaimedSms, 'id' | 'createdAt'>): string =>
  `sms-${createHash('sha256').update(`${m.id} ${m.createdAt}`).digest('base64url').slice(0, 24)}`;

/**
 * Sends what is due in the outbox. Each process runs one; they share the outbox through leases:
 * a claim takes rows no other dispatcher holds, for leaseMs, which is longer than any send may
 * take, so a message is sent by one dispatcher at a time, and a dead one's rows are taken over
 * when its leases end. A failed send is retried with exponential backoff and jitter.
 *
 * Exactly once where it can be: the start of each send is recorded before the provider is called,
 * and cleared by the provider's answer. A claim that finds it set knows that an earlier send's
 * answer was lost (a time-out, a dropped connection, a process killed mid-send): only then is a
 * message sent a second time, counted in asmx_sms_resent_total and logged. An outcome the outbox
 * fails to record is tried again, not sent again.
 */
export class Dispatcher {
  /** Names the leases this dispatcher holds; unique per process and start. */
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private timer: NodeJS.Timeout | undefined;
  private cycle: Promise<void> | null = null;
  private again = false;
  private running = false;
  private stopped: Promise<void> | null = null;

  constructor(
    private readonly outbox: SmsOutbox,
    /** Null (SMS_GATEWAY=none): nothing is claimed or sent; codes stay queued until they expire. */
    private readonly gateway: SmsGateway | null,
    private readonly options: DispatcherOptions,
  ) {}

  start(): void {
    if (this.gateway === null || this.running || this.stopped !== null) return;
    this.running = true;
    this.wake();
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
      await this.cycle;
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
        const validSince = new Date(now.getTime() - this.options.codeTtlSeconds * 1000);
        claimed = await this.outbox.claimDue(this.owner, now, new Date(leaseEnd), BATCH, validSince);
        await this.deliver(claimed, leaseEnd);
      } while (this.running && (claimed.length === BATCH || this.again));
    } catch (err) {
      log.warn('SMS dispatcher cannot read the outbox; trying again at the next poll', { error: (err as Error).message });
    }
  }

  /** Sends a claimed batch side by side, its starts recorded first in one statement. */
  private async deliver(claimed: ClaimedSms[], leaseEnd: number): Promise<void> {
    const ready: ClaimedSms[] = [];
    const settled: Promise<void>[] = [];
    for (const m of claimed) {
      const ageMs = Date.now() - Date.parse(m.createdAt);
      // Stopped while the claim was under way: nothing of it is sent by this process.
      if (!this.running) settled.push(this.release(m));
      else if (ageMs >= this.options.codeTtlSeconds * 1000) settled.push(this.expire(m, leaseEnd, ageMs));
      // A send may only start if it can end while the lease holds: after the lease another dispatcher
      // may claim the row and send it too. A process slowed down since its claim gives the row back.
      else if (Date.now() + this.options.sendTimeoutMs >= leaseEnd) {
        log.warn('SMS lease too short to send; left for the next claim', { id: m.id, phone: m.phone });
        settled.push(this.release(m));
      } else ready.push(m);
    }
    let started: ReadonlySet<number> = new Set();
    if (ready.length > 0) {
      try {
        started = new Set(
          await this.outbox.markStarted(
            ready.map((m) => m.id),
            this.owner,
            new Date(),
          ),
        );
      } catch (err) {
        // Not sent: without the record a lost answer could not be told from no send. The leases end and they are claimed again.
        log.warn('SMS not sent: the start of its send could not be recorded', {
          ids: ready.map((m) => m.id),
          error: (err as Error).message,
        });
      }
    }
    await Promise.all([...settled, ...ready.filter((m) => started.has(m.id)).map((m) => this.send(m, leaseEnd))]);
  }

  private async send(m: ClaimedSms, leaseEnd: number): Promise<void> {
    const gateway = this.gateway!;
    // Tested again here, with no wait between it and the provider's call: recording the start may have
    // taken the process past its lease (a lock waited for, the store's answer read late), and once the
    // lease is over another dispatcher may claim the row and send it. The statement cannot test this
    // itself: its time is the caller's, taken before the wait.
    if (Date.now() + this.options.sendTimeoutMs >= leaseEnd) {
      log.warn('SMS not sent: its lease ran out before the send could start; left for the next claim', { id: m.id, phone: m.phone });
      try {
        await this.outbox.unstart(m.id, this.owner, m.sendStartedAt);
      } catch (err) {
        // The lease ends and the row is claimed again: its recorded start makes the next claim count a resend, though one send goes out.
        log.warn('SMS lease not released; the row waits for its lease to end', { id: m.id, error: (err as Error).message });
      }
      return;
    }
    if (m.sendStartedAt !== null) {
      smsMetrics.resent.inc();
      log.warn("SMS sent again: the provider's answer to an earlier attempt was lost", {
        id: m.id,
        phone: m.phone,
        attempt: m.attempts,
        earlierAttemptAt: m.sendStartedAt,
      });
    }
    try {
      await gateway.send({ phone: m.phone, code: m.code, text: renderMessage(this.options.template, m.code), key: messageKey(m) });
    } catch (err) {
      return this.failed(m, leaseEnd, err instanceof GatewayError ? err : new GatewayError((err as Error).message, true, true));
    }
    if (gateway.sends) smsMetrics.sent.inc();
    const recorded = await this.record(m, leaseEnd, () => this.outbox.markDelivered(m.id, this.owner, new Date()));
    if (recorded === false) log.warn('SMS delivered after its lease ended', { id: m.id, phone: m.phone });
    else if (recorded)
      log.info(gateway.sends ? 'SMS delivered' : 'SMS written to the log, not sent', {
        id: m.id,
        phone: m.phone,
        attempt: m.attempts,
        gateway: gateway.name,
      });
  }

  /**
   * Writes an outcome, trying again for a few seconds (within the lease) when the outbox fails: the
   * send is not repeated for a write that failed. Null when it never got through: the lease ends, and
   * the row's recorded start makes the next claim a counted resend.
   */
  private async record(m: ClaimedSms, leaseEnd: number, write: () => Promise<boolean>): Promise<boolean | null> {
    // Stopping, a second at most: the cluster's kill deadline leaves 2 s beyond a send's time-out.
    const until = Math.min(leaseEnd - 1000, Date.now() + (this.running ? RECORD_RETRY_MS : 1000));
    for (let delay = 100; ; delay *= 2) {
      try {
        return await write();
      } catch (err) {
        if (Date.now() + delay >= until) {
          log.error('SMS outcome not recorded', { id: m.id, phone: m.phone, error: (err as Error).message });
          return null;
        }
        log.warn('SMS outcome not recorded yet; trying again', { id: m.id, retryInMs: delay, error: (err as Error).message });
        await new Promise((r) => setTimeout(r, delay));
      }
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

  private async expire(m: ClaimedSms, leaseEnd: number, ageMs: number): Promise<void> {
    const reason = `code expired after ${this.options.codeTtlSeconds} s; not sent`;
    if (!(await this.record(m, leaseEnd, () => this.outbox.markExpired(m.id, this.owner, new Date(), reason)))) return;
    smsMetrics.expired.inc();
    log.warn('SMS not sent: its code expired', { id: m.id, phone: m.phone, ageSeconds: Math.round(ageMs / 1000) });
  }

  private async failed(m: ClaimedSms, leaseEnd: number, err: GatewayError): Promise<void> {
    if (err.retryable && m.attempts < this.options.maxAttempts) {
      const delay = Math.min(this.options.retryBaseMs * 2 ** (m.attempts - 1), MAX_BACKOFF_MS) * (1 + Math.random() / 2);
      await this.record(m, leaseEnd, () =>
        this.outbox.scheduleRetry(m.id, this.owner, new Date(Date.now() + delay), err.message, err.answerLost),
      );
      smsMetrics.retries.inc();
      log.warn('SMS not sent; will retry', {
        id: m.id,
        phone: m.phone,
        attempt: m.attempts,
        retryInMs: Math.round(delay),
        answerLost: err.answerLost,
        error: err.message,
      });
      return;
    }
    await this.record(m, leaseEnd, () =>
      this.outbox.markFailed(m.id, this.owner, new Date(), err.message, this.options.failedHoldMinutes === 0),
    );
    smsMetrics.failed.inc();
    log.error('SMS failed for good', { id: m.id, phone: m.phone, attempts: m.attempts, error: err.message });
  }
}
