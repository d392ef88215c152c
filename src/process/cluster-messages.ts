import type { Sample } from '../basics/sample';
import type { LogLine, LogWritten } from '../shadow/log-relay';
import type { Readiness } from './admin';

/**
 * What the cluster primary and its workers say to each other over IPC (besides prom-client's own).
 * `connection` comes with the native handle of a connection the primary accepted, numbered; the
 * worker says `taken` with that number before it reads the connection, and `closed` once it has
 * closed (the primary keeps its own copy until `taken`, and counts connections per address until
 * `closed`: handover.ts, transport/connection-cap.ts), or `missed` when the handle did not reach it.
 * `shed?` asks a worker to close an idle connection of an address at its cap (transport/idle.ts),
 * `shed` says whether it did. `shadow-log` carries a line of the differences log, which the primary writes for every worker,
 * and `shadow-logged` what became of it (shadow/log-relay.ts).
 */
export type ToWorker =
  | { type: 'shutdown' }
  | { type: 'readyz?'; id: number }
  | { type: 'connection'; connection: number }
  | { type: 'metrics?'; id: number; names: string[] }
  | { type: 'shed?'; id: number; key: string }
  | LogWritten;
export type ToPrimary =
  | { type: 'serving' }
  | ({ type: 'readyz'; id: number } & Readiness)
  | { type: 'metrics'; id: number; samples: Sample[] }
  | { type: 'taken'; connection: number }
  | { type: 'missed'; connection: number }
  | { type: 'closed'; connection: number }
  | { type: 'shed'; id: number; closed: boolean }
  | LogLine;
