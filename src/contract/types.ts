/** The one record type of the contract; field order is wire order. */
export interface StudentInfo {
  id_student: string;
  fullName: string;
  id_device: string;
  ShowActive: string;
}

export const STUDENT_FIELDS = ['id_student', 'fullName', 'id_device', 'ShowActive'] as const;

/** A result as the bindings render it: void, a nullable string, or a list of students. */
export type Result = void | string | null | StudentInfo[];

/**
 * An operation as the bindings call it: its arguments in contract order, each a string, or `null`
 * for a SOAP parameter that was absent. A char argument is the character itself ('\0' when absent).
 */
export type Operation = (...args: (string | null)[]) => Promise<Result>;
