import type http from 'node:http';

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

/** node's answer, with what is learnt about the request on its way (see transport/exchange.ts). */
export interface Response extends http.ServerResponse {
  locals: Record<string, unknown>;
}
