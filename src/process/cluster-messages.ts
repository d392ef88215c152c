import type { Readiness } from './admin';

/**
 * What the cluster primary and its workers say to each other over IPC (besides prom-client's own).
 * `connection` comes with the socket of a connection the primary accepted.
 */
export type ToWorker = { type: 'shutdown' } | { type: 'readyz?'; id: number } | { type: 'connection' };
export type ToPrimary = { type: 'serving' } | ({ type: 'readyz'; id: number } & Readiness);
