import type { LogLine, LogWritten } from '../shadow/log-relay';
import type { Readiness } from './admin';

/**
 * What the cluster primary and its workers say to each other over IPC (besides prom-client's own).
 * `connection` comes with the socket of a connection the primary accepted, numbered; the worker says
 * `closed` with that number once the connection has closed (the primary counts connections per
 * address, transport/connection-cap.ts). `shadow-log` carries a line of the differences log, which
 * the primary writes for every worker, and `shadow-logged` what became of it (shadow/log-relay.ts).
 */
export type ToWorker =
  | { type: 'shutdown' }
  | { type: 'readyz?'; id: number }
  | { type: 'connection'; connection: number }
  | { type: 'metrics?'; id: number; names: string[] }
  | LogWritten;
export type ToPrimary =
  | { type: 'serving' }
  | ({ type: 'readyz'; id: number } & Readiness)
  | { type: 'metrics'; id: number; text: string }
  | { type: 'closed'; connection: number }
  | LogLine;
