import type { Caller, StudentInfo } from './types';

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

/**
 * Written `as const`: each name and type stays a literal, so the types below are the contract's own,
 * and a service that parts from it fails to compile (services/index.ts).
 */
const CONTRACT = [
  {
    name: 'AuthCodeSending',
    operations: [
      {
        name: 'AuthCode',
        params: [
          { name: 'code', type: 'string' },
          { name: 'phone', type: 'string' },
        ],
        result: 'void',
        effects: true,
      },
    ],
  },
  {
    name: 'GetStudnetsMarks',
    operations: [
      {
        name: 'GetStudentsMarks',
        params: [
          { name: 'StudnetID', type: 'string' },
          { name: 'SubjectID', type: 'string' },
        ],
        result: 'void',
      },
    ],
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
        params: [
          { name: 'school_base_url', type: 'string' },
          { name: 'show_active', type: 'char' },
        ],
        result: 'students',
      },
    ],
  },
  {
    name: 'PushNotificationMobile',
    operations: [
      { name: 'GetTokenDevice', params: [{ name: 'id', type: 'string' }], result: 'string' },
      { name: 'GetServerKeyAndSender', params: [], result: 'void' },
    ],
  },
] as const satisfies readonly EndpointSpec[];

/** The contract as the code reads it at run time. */
export const ENDPOINTS: readonly EndpointSpec[] = CONTRACT;

type Endpoint = (typeof CONTRACT)[number];
export type EndpointName = Endpoint['name'];

/** An argument as an operation gets it: a string, null for an absent one; a char always a character ('\0' when absent). */
type ArgumentOf<P extends ParamSpec> = P['type'] extends 'char' ? string : string | null;

/** An operation's arguments, by their contract names. */
export type ArgumentsOf<O extends OperationSpec> = { readonly [P in O['params'][number] as P['name']]: ArgumentOf<P> };

/** What an operation answers, by the contract's result kind. */
// biome-ignore lint/suspicious/noConfusingVoidType: an operation with an empty answer returns nothing at all
type ResultOf<O extends OperationSpec> = O['result'] extends 'void' ? void : O['result'] extends 'string' ? string | null : StudentInfo[];

/** An endpoint's implementation: a function per operation, taking the caller and its arguments by name. */
export type Implementation<E extends EndpointSpec> = {
  readonly [O in E['operations'][number] as O['name']]: (caller: Caller, args: ArgumentsOf<O>) => Promise<ResultOf<O>>;
};

/** Every endpoint's implementation: what services/index.ts must provide, checked by the compiler. */
export type Services = { readonly [E in Endpoint as E['name']]: Implementation<E> };

/** The arguments of endpoint `E`'s operation `O`, for a service's method to take. */
export type Args<E extends EndpointName, O extends string> = ArgumentsOf<
  Extract<Extract<Endpoint, { name: E }>['operations'][number], { name: O }>
>;

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
