import type { AsmxError } from '../basics/errors';
import type { Exchange, Request, Response } from './types';

/**
 * Bodies that never change once sent: the bytes the bindings keep with a frozen (cached) result
 * (bindings/answers.ts). Shadow traffic hands such a body to its copier once, then by reference.
 */
export const lastingBodies = new WeakSet<Uint8Array>();

export function exchangeOf(res: Response): Exchange {
  const { locals } = res;
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
