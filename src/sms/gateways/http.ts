import type { SmsHttpConfig } from '../../config';
import { needsUnicode, ucs2Hex } from '../message';
import { maskText } from '../../basics/mask';
import { GatewayError, type SmsGateway, type SmsMessage } from './gateway';

const CONTENT_TYPE = { json: 'application/json; charset=utf-8', form: 'application/x-www-form-urlencoded; charset=utf-8' } as const;
/** JSON string content without its quotes: the template puts the quotes around the placeholder. */
const inJson = (value: string): string => JSON.stringify(value).slice(1, -1);

/** Failures before any byte of the request could reach the provider: the message surely did not go. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * A generic HTTP SMS API: the body is SMS_HTTP_BODY with each placeholder escaped for the format
 * (JSON string content, or form encoding in UTF-8). 2xx is success; 429, 5xx, a network error or
 * the time-out may succeed later; any other status is the provider's final no. Each message's key
 * goes in the idempotency header (and {key}), so a provider that honours it sends a resend once.
 */
export class HttpGateway implements SmsGateway {
  readonly name: string;
  readonly sends = true;

  constructor(
    private readonly config: SmsHttpConfig,
    name = 'http',
  ) {
    this.name = name;
  }

  body(message: SmsMessage): string {
    const escaped = this.config.format === 'json' ? inJson : encodeURIComponent;
    const values: Record<string, string> = {
      phone: message.phone,
      message: message.text,
      code: message.code,
      unicode: needsUnicode(message.text) ? '1' : '0',
      ucs2: ucs2Hex(message.text),
      key: message.key,
    };
    return this.config.body.replace(/\{(phone|message|code|unicode|ucs2|key)\}/g, (_, key: string) => escaped(values[key]!));
  }

  async send(message: SmsMessage): Promise<void> {
    let response: Response;
    const idempotency = this.config.idempotencyHeader === '' ? {} : { [this.config.idempotencyHeader]: message.key };
    try {
      response = await fetch(this.config.url, {
        method: this.config.method,
        headers: { ...this.config.headers, ...idempotency, 'Content-Type': CONTENT_TYPE[this.config.format] },
        body: this.body(message),
        signal: AbortSignal.timeout(this.config.timeoutMs),
      });
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } };
      const why =
        e.name === 'TimeoutError' ? `no answer within ${this.config.timeoutMs} ms` : `request failed (${e.cause?.code ?? e.message})`;
      throw new GatewayError(why, true, !NOT_SENT.has(e.cause?.code ?? ''));
    }
    const text = await response.text().catch(() => '');
    if (response.ok) return;
    const retryable = response.status === 429 || response.status >= 500;
    // The provider's words help an operator, but it may echo the message: the code is hidden, and the
    // phone in whatever spelling the provider chose (national, spaced, without its +) is masked by the
    // one rule. White space is made one space first, so that no line break splits a number unseen.
    const said = maskText(text.slice(0, 4096).replaceAll(message.code, '****').replace(/\s+/g, ' ')).slice(0, 200);
    throw new GatewayError(`HTTP ${response.status}${said === '' ? '' : `: ${said}`}`, retryable);
  }
}
