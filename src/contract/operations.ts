/**
 * The service contract as data: five endpoints, six operations, their parameters in wire order and
 * the shape of each result. The bindings, the service pages and the tests all read this table, so an
 * operation is described once.
 */

/** `char` is System.Char: SOAP carries its UTF-16 code, HTTP carries the character itself. */
export type ParamType = 'string' | 'char';

/** What an operation answers: nothing, one (nullable) string, or a list of StudentInfo. */
export type ResultKind = 'void' | 'string' | 'students';

export interface ParamSpec {
  readonly name: string;
  readonly type: ParamType;
}

export interface OperationSpec {
  readonly name: string;
  readonly params: readonly ParamSpec[];
  readonly result: ResultKind;
  /** It changes something outside the answer (AuthCode texts a parent): never run twice for a comparison. */
  readonly effects?: true;
}

export interface EndpointSpec {
  /** Service name, also the path `/<name>.asmx` and the WSDL file `wsdl/<name>.wsdl`. */
  readonly name: string;
  readonly operations: readonly OperationSpec[];
}

const str = (name: string): ParamSpec => ({ name, type: 'string' });

export const ENDPOINTS: readonly EndpointSpec[] = [
  {
    name: 'AuthCodeSending',
    operations: [{ name: 'AuthCode', params: [str('code'), str('phone')], result: 'void', effects: true }],
  },
  {
    name: 'GetStudnetsMarks',
    operations: [{ name: 'GetStudentsMarks', params: [str('StudnetID'), str('SubjectID')], result: 'void' }],
  },
  {
    name: 'AboutUs',
    operations: [{ name: 'GetAboutUs', params: [], result: 'void' }],
  },
  {
    name: 'NotificationNotes',
    operations: [
      {
        name: 'GetStudentSchool',
        params: [str('school_base_url'), { name: 'show_active', type: 'char' }],
        result: 'students',
      },
    ],
  },
  {
    name: 'PushNotificationMobile',
    operations: [
      { name: 'GetTokenDevice', params: [str('id')], result: 'string' },
      { name: 'GetServerKeyAndSender', params: [], result: 'void' },
    ],
  },
];

/** Finds an endpoint by its name as IIS does: without regard to case. */
export function findEndpoint(name: string): EndpointSpec | undefined {
  const lower = name.toLowerCase();
  return ENDPOINTS.find((e) => e.name.toLowerCase() === lower);
}

/**
 * An operation's SOAPAction as .NET builds the default one (in the WSDL and for routing): the
 * namespace, a `/` unless it already ends with one, and the operation name.
 */
export function soapActionOf(ns: string, operation: string): string {
  return ns.endsWith('/') ? ns + operation : `${ns}/${operation}`;
}
