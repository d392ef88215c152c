import type { SmsConfig } from '../../config';
import type { SmsGateway } from './gateway';
import { HttpGateway } from './http';
import { LogGateway } from './log';

export { GatewayError, type SmsGateway, type SmsMessage } from './gateway';

/** The gateway SMS_GATEWAY names, or null for `none`; Twilio is the HTTP gateway, set up by twilioPreset when the configuration is read. */
export function createGateway(config: SmsConfig): SmsGateway | null {
  switch (config.gateway) {
    case 'none':
      return null;
    case 'log':
      return new LogGateway();
    default:
      return new HttpGateway(config.http, config.gateway);
  }
}
