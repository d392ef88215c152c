/** The one record type of the contract; field order is wire order. */
export interface StudentInfo {
  id_student: string;
  fullName: string;
  id_device: string;
  ShowActive: string;
}

export const STUDENT_FIELDS = ['id_student', 'fullName', 'id_device', 'ShowActive'] as const;

/** A result as the bindings render it: void, a nullable string, or a list of students. */
// biome-ignore lint/suspicious/noConfusingVoidType: an operation with an empty answer returns nothing at all
export type Result = void | string | null | StudentInfo[];

/**
 * Who is asking, read once by the request hooks as the request arrives: what an operation may need
 * beyond its arguments (AuthCode's limits count by address, and its log lines carry the request's id).
 */
export interface Caller {
  /** The request's id (X-Request-Id). */
  readonly reqId: string;
  /** The client's IP address: the socket's peer, or behind a trusted proxy the address it saw. */
  readonly clientAddress: string | null;
}

/**
 * An operation as the bindings call it: the caller, then its arguments by their contract names, each
 * a string, or `null` for a SOAP parameter that was absent. A char argument is the character itself
 * ('\0' when absent). The services' own, typed from the contract: `Services` in operations.ts.
 */
export type Operation = (caller: Caller, args: Readonly<Record<string, string | null>>) => Promise<Result>;
