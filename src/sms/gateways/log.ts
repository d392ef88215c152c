import { log } from '../../log';
import { maskPhone } from '../validation';
import type { SmsGateway, SmsMessage } from './gateway';

/**
 * The default: nothing leaves the machine. Its own log line is the one place a code is written to
 * a log, so that a developer can sign in; the start-up warning says so once.
 */
export class LogGateway implements SmsGateway {
  readonly name = 'log';

  constructor() {
    log.warn('SMS_GATEWAY=log: text messages are written to this log and never really sent');
  }

  async send(message: SmsMessage): Promise<void> {
    log.info('sms (log gateway, not sent)', { phone: maskPhone(message.phone), text: message.text });
  }
}
