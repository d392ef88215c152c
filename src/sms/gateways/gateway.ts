/** One text message to one phone, as a gateway sends it. */
export interface SmsMessage {
  /** E.164. */
  phone: string;
  code: string;
  text: string;
  /** The same on every attempt at this message: a provider that supports it sends it once. */
  key: string;
}

/** Sends one message; resolves when the provider has accepted it, rejects with a GatewayError. */
export interface SmsGateway {
  readonly name: string;
  /** False for a gateway that only writes messages down (log): nothing reaches a phone. */
  readonly sends: boolean;
  send(message: SmsMessage): Promise<void>;
}

/**
 * A send that did not work. `retryable`: the provider may accept it later (5xx, 429, time-out).
 * `answerLost`: the request may have reached the provider, whose answer never came (a time-out, a
 * connection dropped after the request was written): the message may have gone out.
 */
export class GatewayError extends Error {
  override name = 'GatewayError';

  constructor(
    message: string,
    readonly retryable: boolean,
    readonly answerLost = false,
  ) {
    super(message);
  }
}
