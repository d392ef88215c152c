import type { CaseKind } from '../../src/shadow/compare';

/**
 * The parts the legacy comparison's corpus is built from: a case (one request and how its answers
 * are compared), the operations, SOAP envelopes and forms as callers write them, and the Corpus that
 * names each case once. The cases themselves are in corpus-*.ts, in the order corpus.ts gives.
 */
export interface Case {
  name: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  /** UTF-8 text of the request body (absent: no body). */
  body?: string;
  /** The body as raw bytes, when it is not UTF-8 text (instead of `body`). */
  bodyBase64?: string;
  /** The path to ask the legacy host (case-sensitive there), when not `path`. */
  legacyPath?: string;
  /** How the answers are compared: `full`, `page` (?wsdl/?disco), `help` (status and type only), `error` (runtime error page). */
  kind: CaseKind;
  /** Sent as HTTP/1.0 (as nginx speaks to its upstream by default) instead of HTTP/1.1. */
  httpVersion?: '1.0';
}

/** The namespace of the services' default setting (ASMX's `[WebService]` default). */
export const TEMPURI = 'http://tempuri.org/';
/**
 * The service namespace the cases are being built for, and the SOAPAction prefix that goes with it:
 * .NET's SoapReflector joins namespace and operation with a `/` unless the namespace ends in one
 * (`http://host/path` gives `http://host/path/Op`, `urn:x` gives `urn:x/Op`). Both are set, for one
 * build only, by withNamespace(); live bindings, so every corpus-*.ts reads the namespace in force.
 */
export let NS = TEMPURI;
export let AP = TEMPURI;

export function actionUri(name: string, ns = NS): string {
  return ns.endsWith('/') ? `${ns}${name}` : `${ns}/${name}`;
}

/** Runs `build` with NS (and AP) set to `ns`, restoring the default afterwards. */
export function withNamespace<T>(ns: string, build: () => T): T {
  NS = ns;
  AP = actionUri('', ns);
  try {
    return build();
  } finally {
    NS = TEMPURI;
    AP = TEMPURI;
  }
}
export const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';
export const SOAP12 = 'http://www.w3.org/2003/05/soap-envelope';
export const XSI = 'http://www.w3.org/2001/XMLSchema-instance';
export const XSD = 'http://www.w3.org/2001/XMLSchema';
export const DECL = '<?xml version="1.0" encoding="utf-8"?>';
export const CT11 = 'text/xml; charset=utf-8';
export const CT12 = 'application/soap+xml; charset=utf-8';
export const FORM = 'application/x-www-form-urlencoded';

export interface Op {
  service: string;
  name: string;
  params: string[];
}

export const OPS: Op[] = [
  { service: 'AuthCodeSending', name: 'AuthCode', params: ['code', 'phone'] },
  { service: 'GetStudnetsMarks', name: 'GetStudentsMarks', params: ['StudnetID', 'SubjectID'] },
  { service: 'AboutUs', name: 'GetAboutUs', params: [] },
  { service: 'NotificationNotes', name: 'GetStudentSchool', params: ['school_base_url', 'show_active'] },
  { service: 'PushNotificationMobile', name: 'GetTokenDevice', params: ['id'] },
  { service: 'PushNotificationMobile', name: 'GetServerKeyAndSender', params: [] },
];
export const SERVICES = [...new Set(OPS.map((o) => o.service))];

export function op(name: string): Op {
  const o = OPS.find((x) => x.name === name);
  if (!o) throw new Error(`no op ${name}`);
  return o;
}
export const servicePath = (o: Op) => `/${o.service}.asmx`;

export function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Parameter values as the caller means them: text (escaped), raw XML (`{raw}`), or absent (null). */
export type Val = string | { raw: string } | null;
export type Params = Array<[string, Val]>;

/** A data row's value on the SOAP wire: show_active travels as the UTF-16 code of its character. */
export function soapValue(param: string, v: string): string {
  return param === 'show_active' ? (v.length === 1 ? String(v.charCodeAt(0)) : v) : v;
}

export function opElement(o: Op | string, params: Params, opts: { nl?: string; indent?: string } = {}): string {
  const name = typeof o === 'string' ? o : o.name;
  const nl = opts.nl ?? '';
  const ind = opts.indent ?? '';
  const kids = params
    .filter(([, v]) => v !== null)
    .map(([k, v]) => `${nl}${ind}  <${k}>${typeof v === 'string' ? esc(v) : v!.raw}</${k}>`)
    .join('');
  return kids === '' ? `<${name} xmlns="${NS}" />` : `<${name} xmlns="${NS}">${kids}${nl}${ind}</${name}>`;
}

export interface EnvOpts {
  decl?: string;
  header?: string;
  /** newline to put between elements (pretty printing), '' for none */
  nl?: string;
}

export function envelope(version: 11 | 12, inner: string, opts: EnvOpts = {}): string {
  const nl = opts.nl ?? '';
  const header = opts.header !== undefined ? `${nl}  ${opts.header}` : '';
  return (
    `${opts.decl ?? DECL}${nl}<soap:Envelope xmlns:xsi="${XSI}" xmlns:xsd="${XSD}" ` +
    `xmlns:soap="${version === 11 ? SOAP11 : SOAP12}">${header}${nl}  <soap:Body>${nl}    ${inner}${nl}  </soap:Body>${nl}</soap:Envelope>`
  );
}

/** The op element, parameters given as data values (SOAP conversion applied). */
export function soapOp(o: Op, values: Array<string | null>, nl = ''): string {
  return opElement(
    o,
    o.params.map((p, i) => [p, values[i] === null || values[i] === undefined ? null : soapValue(p, values[i]!)]),
    nl ? { nl, indent: '    ' } : {},
  );
}

export const action = (name: string) => `"${actionUri(name)}"`;

export function form(pairs: Array<[string, string]>): string {
  return pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
}

export class Corpus {
  readonly cases: Case[] = [];
  private readonly names = new Set<string>();

  add(c: Omit<Case, 'kind'> & { kind?: CaseKind }): void {
    if (this.names.has(c.name)) throw new Error(`duplicate case name ${c.name}`);
    this.names.add(c.name);
    const headers = { ...c.headers };
    this.cases.push({ ...c, headers, kind: c.kind ?? 'full' });
  }

  soap11(name: string, path: string, body: string, soapAction: string | null, contentType: string | null = CT11): void {
    const headers: Record<string, string> = {};
    if (contentType !== null) headers['Content-Type'] = contentType;
    if (soapAction !== null) headers.SOAPAction = soapAction;
    this.add({ name, method: 'POST', path, headers, body });
  }

  soap12(name: string, path: string, body: string, contentType: string | null = CT12, extra: Record<string, string> = {}): void {
    const headers: Record<string, string> = {};
    if (contentType !== null) headers['Content-Type'] = contentType;
    this.add({ name, method: 'POST', path, headers: { ...headers, ...extra }, body });
  }

  get(name: string, path: string, extra: Partial<Case> = {}): void {
    this.add({ name, method: 'GET', path, headers: {}, ...extra });
  }

  post(name: string, path: string, body: string, contentType: string | null = FORM): void {
    this.add({ name, method: 'POST', path, headers: contentType === null ? {} : { 'Content-Type': contentType }, body });
  }

  /** One data row on all four bindings. */
  allBindings(o: Op, label: string, values: Array<string | null>): void {
    const p = servicePath(o);
    this.soap11(`soap11/${o.name}/${label}`, p, envelope(11, soapOp(o, values)), action(o.name));
    this.soap12(`soap12/${o.name}/${label}`, p, envelope(12, soapOp(o, values)));
    const pairs = o.params.flatMap((k, i) => (values[i] === null ? [] : [[k, values[i]!] as [string, string]]));
    const q = form(pairs);
    this.get(`get/${o.name}/${label}`, `${p}/${o.name}${q ? `?${q}` : ''}`);
    this.post(`post/${o.name}/${label}`, `${p}/${o.name}`, q);
  }
}

export const ALNOOR = 'http://alnoor.school.example';
export const RAFIDAIN = 'http://rafidain.school.example';
export const ARABIC_SCHOOL = 'http://مدرسة.example';
export const BIG = 'http://big.school.example';

const auth = op('AuthCode');
const school = op('GetStudentSchool');
const token = op('GetTokenDevice');
/** The operations most cases use, and their services' paths. */
export const OP = {
  auth,
  marks: op('GetStudentsMarks'),
  about: op('GetAboutUs'),
  school,
  token,
  serverKey: op('GetServerKeyAndSender'),
};
export const SCHOOL = servicePath(school);
export const PUSH = servicePath(token);
/** The operation paths of the HTTP GET/POST cases. */
export const AUTH_OP = `${servicePath(auth)}/AuthCode`;
export const SCHOOL_OP = `${SCHOOL}/GetStudentSchool`;
export const TOKEN_OP = `${PUSH}/GetTokenDevice`;
/** The operation elements most SOAP cases wrap, by their content. */
export const tokEl = (inner: string) => `<GetTokenDevice xmlns="${NS}">${inner}</GetTokenDevice>`;
export const schEl = (inner: string) => `<GetStudentSchool xmlns="${NS}">${inner}</GetStudentSchool>`;
export const tokOp = () => soapOp(token, ['dev-1001']);
