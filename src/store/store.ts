import type { StudentInfo } from '../services/types';

/** A row of the students table, as imported. */
export interface StudentRow extends StudentInfo {
  school_base_url: string;
}

/** A row of the devices table, as imported. */
export interface DeviceRow {
  id_device: string;
  token: string;
}

/** An AuthCode request waiting for SMS delivery. */
export interface OutboxEntry {
  id: number;
  code: string | null;
  phone: string | null;
  createdAt: string;
}

export interface ImportCounts {
  students: number;
  devices: number;
}

/**
 * What the services need from storage. Each backend (SQLite now, PostgreSQL later) implements it;
 * every query behind it is parameterised.
 */
export interface Store {
  /** Students of a school whose ShowActive equals `showActive`, ordered by id_student. */
  studentsOf(schoolBaseUrl: string | null, showActive: string): Promise<StudentInfo[]>;
  /** The token of a device, or null when there is none. */
  deviceToken(idDevice: string | null): Promise<string | null>;
  /** Keeps an AuthCode request until it is delivered; resolves once it is durable. */
  enqueueAuthCode(code: string | null, phone: string | null): Promise<void>;
  /** The AuthCode requests not yet delivered, oldest first. */
  pendingAuthCodes(limit: number): Promise<OutboxEntry[]>;
  /** Inserts or replaces rows by key, all or nothing. */
  upsert(students: readonly StudentRow[], devices: readonly DeviceRow[]): Promise<ImportCounts>;
  /**
   * Resolves when the store answers and its schema is the one this program migrates to; rejects
   * otherwise. Cheap: readiness probes call it every few seconds.
   */
  ping(): Promise<void>;
  /** How many rows the store holds, for the start line. */
  counts(): Promise<ImportCounts>;
  /** A pooled store's connections, for the metrics; absent when there is no pool. */
  poolUsage?(): PoolUsage;
  close(): Promise<void>;
}

export interface PoolUsage {
  total: number;
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
}
