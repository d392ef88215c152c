import type { SmsConfig } from '../config';
import type { Store } from '../store/store';
import { Dispatcher } from './dispatcher';
import { createGateway } from './gateways';
import { SmsIntake } from './intake';
import { type Limiter, MemoryLimiter, SharedLimiter } from './limits';
import { outsideRequest } from '../transport/context';

export { Dispatcher } from './dispatcher';
export { SmsIntake } from './intake';

/** The SMS side of one process: requests in (the intake), messages out (the dispatcher). */
export interface Sms {
  intake: SmsIntake;
  dispatcher: Dispatcher;
  limiter: Limiter;
  /**
   * Stops the dispatcher (dispatcher.stop(): sends in flight finish, unsent claims are released) and
   * disconnects Redis. Idempotent. A stopping process may call dispatcher.stop() first, as soon as it
   * drains, so that it claims nothing more while its requests finish.
   */
  close(): Promise<void>;
}

export function createSms(config: SmsConfig, store: Store): Sms {
  const limiter = config.redisUrl === null ? new MemoryLimiter() : new SharedLimiter(config.redisUrl, config.redisKeyPrefix);
  const gateway = createGateway(config);
  // Only the HTTP gateways wait on the network; the log gateway's send is immediate.
  const dispatcher = new Dispatcher(store.outbox, gateway, { ...config, sendTimeoutMs: config.gateway === 'log' ? 0 : config.http.timeoutMs });
  const intake = new SmsIntake(config, store, limiter, () => outsideRequest(() => dispatcher.wake()));
  let closed: Promise<void> | null = null;
  return {
    intake,
    dispatcher,
    limiter,
    close: () =>
      (closed ??= (async () => {
        await dispatcher.stop();
        await limiter.close();
      })()),
  };
}
