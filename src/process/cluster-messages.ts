import type { Readiness } from './admin';

/**
 * What the cluster primary and its workers say to each other over IPC (besides prom-client's own).
 * `connection` comes with the socket of a connection the primary accepted. A stopping worker says
 * `stopping`; the primary answers `drain` once it will hand that worker no more connections (sent
 * after the last one on the same channel, so it arrives after it).
 */
export type ToWorker = { type: 'shutdown' } | { type: 'drain' } | { type: 'readyz?'; id: number } | { type: 'connection' } | { type: 'metrics?'; id: number; names: string[] };
export type ToPrimary = { type: 'serving' } | { type: 'stopping' } | ({ type: 'readyz'; id: number } & Readiness) | { type: 'metrics'; id: number; text: string };
