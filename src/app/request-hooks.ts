import { randomUUID } from 'node:crypto';
import type { Request, Response } from '../transport/types';
import { exchangeOf, type RequestTap } from '../transport/exchange';
import { logger, logRequest } from '../basics/log';
import { recordExchange } from './metrics';
import { clientAddress, setCaller } from '../transport/context';

/** A request id taken from a client is kept only if it is short and plain (it goes into logs and a header). */
const ACCEPTABLE_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

export interface HookOptions {
  /** Whether X-Forwarded-For names the client (behind a proxy the socket's address is the proxy's). */
  trustProxy: boolean;
  /** Shadow traffic's hold on the request (src/shadow), when it is on. */
  tap?: RequestTap;
}

/**
 * The one place around every request: on the way in it gives the request its id (X-Request-Id kept
 * or made, and returned); when the answer is finished (or the connection dropped) it writes the
 * request's log line (with why, when it was refused), logs an unexpected error with its stack under the same id, and updates the
 * metrics, and hands the exchange to shadow traffic's tap (after the client has its answer). What the
 * request was (endpoint, operation, binding, fault) is reported by the bindings on its Exchange.
 */
export function requestHooks(options: HookOptions): (req: Request, res: Response, next: () => void) => void {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    const writtenBefore = req.socket.bytesWritten;
    const offered = req.headers['x-request-id'];
    const requestId = typeof offered === 'string' && ACCEPTABLE_ID.test(offered) ? offered : randomUUID();
    // Where error logging elsewhere can read it; the Exchange starts from it.
    res.locals.requestId = requestId;
    const ex = exchangeOf(res);
    res.setHeader('X-Request-Id', requestId);
    // Read once: the log line has it, and the binding hands it to the operation with the id
    // (AuthCode's limits count by it).
    const client = clientAddress(req, options.trustProxy);
    setCaller(res, { reqId: requestId, clientAddress: client });
    const tapped = options.tap?.(req, res) ?? null;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      // A connection dropped before the answer was complete is logged as status 0.
      const status = res.writableFinished ? res.statusCode : 0;
      if (ex.error !== undefined) logger.error({ reqId: requestId, error: ex.error }, 'request failed');
      recordExchange(ex, status, seconds);
      tapped?.(ex, status);
      logRequest({
        reqId: requestId,
        method: req.method,
        endpoint: ex.endpoint,
        operation: ex.operation,
        binding: ex.binding,
        status,
        fault: ex.fault,
        reason: ex.reason,
        ms: Math.round(seconds * 1e4) / 10,
        client,
        bytesIn: Number(req.headers['content-length'] ?? 0) || 0,
        // Headers included; on a keep-alive connection the count starts where the last answer ended.
        bytesOut: req.socket.bytesWritten - writtenBefore,
      });
    };
    res.once('finish', finish);
    res.once('close', finish);
    next();
  };
}
