import type http from 'node:http';
import type { AsmxError } from '../basics/errors';
import type { Caller } from '../contract/types';

/**
 * The request and answer as the service handles them: node's own objects, with no framework's
 * prototype swapped in (the service uses none of a framework's helpers, and swapping prototypes on
 * every request costs more than all of its routing).
 */

/** node's request, with the body once read (a POST). */
export interface Request extends http.IncomingMessage {
  url: string;
  body?: Buffer;
}

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
 * What is learnt about a request on its way to its answer, in one typed place: set by whoever learns
 * it (the request hooks, routing, a binding) and read by the hooks once the answer is finished.
 */
export interface RequestState {
  /** The request's id (its X-Request-Id, else one made up), set first, by the request hooks. */
  requestId?: string;
  /** Who sent it (context.ts). */
  caller?: Caller;
  /** What it turned out to be (exchange.ts). */
  exchange?: Exchange;
}

/** node's answer, with the request's state (see transport/exchange.ts). */
export interface Response extends http.ServerResponse {
  locals: RequestState;
}
