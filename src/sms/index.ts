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
  /** Stops the dispatcher (sends in flight finish) and disconnects Redis. */
  close(): Promise<void>;
}

export function createSms(config: SmsConfig, store: Store): Sms {
  const limiter = config.redisUrl === null ? new MemoryLimiter() : new SharedLimiter(config.redisUrl, config.redisKeyPrefix);
  const gateway = createGateway(config);
  // Only the HTTP gateways wait on the network; the log gateway's send is immediate.
  const dispatcher = new Dispatcher(store.outbox, gateway, { ...config, sendTimeoutMs: config.gateway === 'log' ? 0 : config.http.timeoutMs });
  const intake = new SmsIntake(config, store, limiter, () => outsideRequest(() => dispatcher.wake()));
  return {
    intake,
    dispatcher,
    limiter,
    close: async () => {
      await dispatcher.stop();
      await limiter.close();
    },
  };
}
