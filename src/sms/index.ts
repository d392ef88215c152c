import type { SmsConfig } from '../config';
import type { Store } from '../store/store';
import { Dispatcher } from './dispatcher';
import { createGateway } from './gateways';
import { SmsIntake } from './intake';
import { type Limiter, MemoryLimiter, SharedLimiter } from './limits';
import { smsMetrics } from './metrics';
import { Retention } from './retention';

export { Dispatcher } from './dispatcher';
export { SmsIntake } from './intake';
export { Retention } from './retention';
export { smsReadiness, smsSummary } from './summary';

/** The SMS side of one process: requests in (the intake), messages out (the dispatcher), housekeeping. */
export interface Sms {
  intake: SmsIntake;
  dispatcher: Dispatcher;
  retention: Retention;
  limiter: Limiter;
  /** Starts sending (unless SMS_GATEWAY=none) and the outbox's housekeeping. */
  start(): void;
  /**
   * Stops the dispatcher (dispatcher.stop(): sends in flight finish, unsent claims are released), the
   * housekeeping, and disconnects Redis. Idempotent. A stopping process may call dispatcher.stop()
   * first, as soon as it drains, so that it claims nothing more while its requests finish.
   */
  close(): Promise<void>;
}

export function createSms(config: SmsConfig, store: Store): Sms {
  const limiter = config.redisUrl === null ? new MemoryLimiter() : new SharedLimiter(config.redisUrl, config.redisKeyPrefix);
  const gateway = createGateway(config);
  smsMetrics.sending.set({ gateway: config.gateway }, gateway?.sends === true ? 1 : 0);
  // Only the HTTP gateways wait on the network; the log gateway's send is immediate.
  const sendTimeoutMs = gateway?.sends === true ? config.http.timeoutMs : 0;
  const dispatcher = new Dispatcher(store.outbox, gateway, { ...config, sendTimeoutMs });
  const retention = new Retention(store.outbox, config);
  const intake = new SmsIntake(config, store, limiter, () => dispatcher.wake());
  let closed: Promise<void> | null = null;
  return {
    intake,
    dispatcher,
    retention,
    limiter,
    start: () => {
      dispatcher.start();
      retention.start();
    },
    close: () =>
      (closed ??= (async () => {
        await Promise.all([dispatcher.stop(), retention.stop()]);
        await limiter.close();
      })()),
  };
}
