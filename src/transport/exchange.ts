import type { Request, Response } from './types';
import type { AsmxError } from '../basics/errors';

export type Binding = 'soap11' | 'soap12' | 'httpget' | 'httppost' | 'documentation';

/**
 * What a request turned out to be, filled in by whoever learns it (routing, a binding) and read once
 * by the request hooks when the answer is finished: the bindings report here and never log or count
 * themselves.
 */
export interface Exchange {
  requestId: string;
  endpoint?: string;
  /** Only names from the contract, so that metrics labels stay a small fixed set. */
  operation?: string;
  binding?: Binding;
  /** The fault code of a SOAP fault or HTTP error text, in SOAP 1.1 words (Client, Server, ...). */
  fault?: AsmxError['side'];
  /** Why a request was refused or failed, in words for the log: the parser's, the limit's, the missing parameter's; never a value. */
  reason?: string;
  /** An unexpected failure behind a generic answer; logged with its stack and the request id. */
  error?: unknown;
  /** The answer's body as it went out (bindings/send.ts): what shadow traffic compares, kept by reference. */
  body?: string | Uint8Array;
}

/**
 * Bodies that never change once sent: the bytes the bindings keep with a frozen (cached) result
 * (bindings/answers.ts). Shadow traffic hands such a body to its copier once, then by reference.
 */
export const lastingBodies = new WeakSet<Uint8Array>();

export function exchangeOf(res: Response): Exchange {
  const locals = res.locals as { exchange?: Exchange; requestId?: string };
  return (locals.exchange ??= { requestId: locals.requestId ?? '' });
}

/** Records an error answered with `error`: its code and reason, and the cause when it was not an ASMX error. */
export function reportFault(res: Response, error: AsmxError, cause?: unknown): void {
  const ex = exchangeOf(res);
  ex.fault = error.side;
  ex.reason = error.reason;
  if (cause !== undefined && cause !== error) ex.error = cause;
}

/** Records why a request was refused with an answer that has no fault of its own (a bare 400 or 415, a host error). */
export function reportRefusal(res: Response, reason: string): void {
  exchangeOf(res).reason = reason;
}

/**
 * Follows a request to its answer: called as the request arrives, it returns what to call once the
 * answer is finished (with the request's Exchange and status), or null to let this request go.
 */
export type RequestTap = (req: Request, res: Response) => ((ex: Exchange, status: number) => void) | null;
