import { log } from '../../basics/log';
import type { SmsGateway, SmsMessage } from './gateway';

/**
 * For development, and only when named (SMS_GATEWAY=log): nothing leaves the machine, and the text,
 * code included, is written to its own log line so that a developer can sign in. The start-up
 * warning says so once; the default gateway (none) writes no code anywhere.
 */
export class LogGateway implements SmsGateway {
  readonly name = 'log';
  readonly sends = false;

  constructor() {
    log.warn('SMS_GATEWAY=log: text messages, codes included, are written to this log and never really sent; for development only');
  }

  async send(message: SmsMessage): Promise<void> {
    log.info('sms (log gateway, not sent)', { phone: message.phone, text: message.text });
  }
}
