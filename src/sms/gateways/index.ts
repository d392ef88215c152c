import type { SmsConfig } from '../../config';
import type { SmsGateway } from './gateway';
import { HttpGateway } from './http';
import { LogGateway } from './log';

export { GatewayError, type SmsGateway, type SmsMessage } from './gateway';

/** The gateway SMS_GATEWAY names; Twilio is the HTTP gateway with its preset (config.ts). */
export function createGateway(config: SmsConfig): SmsGateway {
  return config.gateway === 'log' ? new LogGateway() : new HttpGateway(config.http, config.gateway);
}
