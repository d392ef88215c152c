/** One text message to one phone, as a gateway sends it. */
export interface SmsMessage {
  /** E.164. */
  phone: string;
  code: string;
  text: string;
}

/** Sends one message; resolves when the provider has accepted it, rejects with a GatewayError. */
export interface SmsGateway {
  readonly name: string;
  send(message: SmsMessage): Promise<void>;
}

/** A send that did not work. `retryable`: the provider may accept it later (5xx, 429, time-out). */
export class GatewayError extends Error {
  override name = 'GatewayError';

  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
  }
}
