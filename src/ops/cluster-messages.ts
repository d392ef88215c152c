import type { Readiness } from './admin';

/** What the cluster primary and its workers say to each other over IPC (besides prom-client's own). */
export type ToWorker = { type: 'shutdown' } | { type: 'readyz?'; id: number };
export type ToPrimary = { type: 'listening' } | ({ type: 'readyz'; id: number } & Readiness);
