/**
 * The sample messages of an operation's help page (`GET /X.asmx?op=Op`), for SOAP 1.1, SOAP 1.2, HTTP
 * GET and HTTP POST: XML as XmlTextWriter indents it, shown HTML-escaped with placeholders, as
 * ASP.NET's DefaultWsdlHelpGenerator.aspx shows them. Windows line ends.
 */
import { type EndpointSpec, type OperationSpec, type ParamSpec, soapActionOf } from '../contract/operations';
import { STUDENT_FIELDS } from '../contract/types';
import { escapeMarkup } from '../basics/escape';
import { Soap12, type SoapVersion } from '../contract/soap-versions';

const NL = '\r\n';

/** Where a page is served: what the samples and the test form need of the service URL. */
export interface Location {
  /** The .asmx file name, the base of the page's relative links. */
  readonly file: string;
  /** Path of the .asmx as the client sees it, HTML-escaped. */
  readonly path: string;
  /** Host name without port, HTML-escaped: ASP.NET shows the address's Uri.Host. */
  readonly host: string;
  /** The service URL, HTML-escaped. */
  readonly url: string;
}

export function locate(serviceUrl: string, endpoint: EndpointSpec): Location {
  const url = new URL(serviceUrl);
  return {
    file: escapeMarkup(`${endpoint.name}.asmx`),
    path: escapeMarkup(url.pathname),
    host: escapeMarkup(url.hostname),
    url: escapeMarkup(serviceUrl),
  };
}

/** The help page's samples name 1.2's envelope prefix `soap12`, where the service's answers say `soap` for both. */
const samplePrefix = (version: SoapVersion): string => (version === Soap12 ? 'soap12' : 'soap');

interface SampleElement {
  readonly name: string;
  /** Attributes as displayed, already escaped, with a leading space. */
  readonly attributes?: string;
  readonly placeholder?: string;
  readonly children?: readonly SampleElement[];
}

const XML_DECLARATION = '&lt;?xml version="1.0" encoding="utf-8"?&gt;';

const value = (text: string): string => `<font class=value>${text}</font>`;

/** A namespace as shown inside `<pre>`: escaped once as XML would, then once for HTML. */
const xmlnsAttribute = (ns: string): string => ` xmlns="${escapeMarkup(escapeMarkup(ns))}"`;

function sampleLines(element: SampleElement, depth = 0): string[] {
  const indent = '  '.repeat(depth);
  const start = `${indent}&lt;${element.name}${element.attributes ?? ''}`;
  if (element.placeholder !== undefined) {
    return [`${start}&gt;${value(element.placeholder)}&lt;/${element.name}&gt;`];
  }
  const children = element.children ?? [];
  if (children.length === 0) return [`${start} /&gt;`];
  return [`${start}&gt;`, ...children.flatMap((child) => sampleLines(child, depth + 1)), `${indent}&lt;/${element.name}&gt;`];
}

const studentInfo: SampleElement = {
  name: 'StudentInfo',
  children: STUDENT_FIELDS.map((field) => ({ name: field, placeholder: 'string' })),
};

/** DefaultWsdlHelpGenerator shows two items of an array. */
const twoStudents: readonly SampleElement[] = [studentInfo, studentInfo];

/** A char is an s1:char, a primitive of the Microsoft types namespace, shown by its type name. */
const soapPlaceholder = (param: ParamSpec): string => (param.type === 'char' ? 'char' : 'string');

function soapBodyRequest(ns: string, operation: OperationSpec): SampleElement {
  return {
    name: operation.name,
    attributes: xmlnsAttribute(ns),
    children: operation.params.map((param) => ({ name: param.name, placeholder: soapPlaceholder(param) })),
  };
}

function soapBodyResponse(ns: string, operation: OperationSpec): SampleElement {
  const result = `${operation.name}Result`;
  const children: readonly SampleElement[] =
    operation.result === 'void'
      ? []
      : operation.result === 'string'
        ? [{ name: result, placeholder: 'string' }]
        : [{ name: result, children: twoStudents }];
  return { name: `${operation.name}Response`, attributes: xmlnsAttribute(ns), children };
}

function envelope(version: SoapVersion, body: SampleElement): string[] {
  const p = samplePrefix(version);
  return [
    XML_DECLARATION,
    ...sampleLines({
      name: `${p}:Envelope`,
      attributes: ` xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:${p}="${version.envelopeNs}"`,
      children: [{ name: `${p}:Body`, children: [body] }],
    }),
  ];
}

/** ASP.NET escapes the SOAPAction's non-ASCII bytes as %XX before showing it. */
function utf8Escape(text: string): string {
  return Array.from(Buffer.from(text, 'utf8'), (byte) =>
    byte > 0x7f ? `%${byte.toString(16).toUpperCase()}` : String.fromCharCode(byte),
  ).join('');
}

export function soapRequest(version: SoapVersion, location: Location, ns: string, operation: OperationSpec): string {
  return [
    `POST ${location.path} HTTP/1.1`,
    `Host: ${location.host}`,
    `Content-Type: ${version.contentType}`,
    `Content-Length: ${value('length')}`,
    ...(version.soapActionHeader ? [`SOAPAction: "${escapeMarkup(utf8Escape(soapActionOf(ns, operation.name)))}"`] : []),
    '',
    ...envelope(version, soapBodyRequest(ns, operation)),
  ].join(NL);
}

export function soapResponse(version: SoapVersion, ns: string, operation: OperationSpec): string {
  return [
    'HTTP/1.1 200 OK',
    `Content-Type: ${version.contentType}`,
    `Content-Length: ${value('length')}`,
    '',
    ...envelope(version, soapBodyResponse(ns, operation)),
  ].join(NL);
}

/** HTTP bindings type every parameter as s:string. */
function formPairs(operation: OperationSpec): string {
  return operation.params.map((param) => `<font class=key>${escapeMarkup(param.name)}</font>=${value('string')}`).join('&amp;');
}

export function httpGetRequest(location: Location, operation: OperationSpec): string {
  // The '?' is written even when there is no parameter, as ASP.NET does.
  return [`GET ${location.path}/${escapeMarkup(operation.name)}?${formPairs(operation)} HTTP/1.1`, `Host: ${location.host}`, ''].join(NL);
}

export function httpPostRequest(location: Location, operation: OperationSpec): string {
  return [
    `POST ${location.path}/${escapeMarkup(operation.name)} HTTP/1.1`,
    `Host: ${location.host}`,
    'Content-Type: application/x-www-form-urlencoded',
    `Content-Length: ${value('length')}`,
    '',
    formPairs(operation),
  ].join(NL);
}

/** A void operation's HTTP output message has no part, so only the status line is shown. */
export function httpResponse(ns: string, operation: OperationSpec): string {
  if (operation.result === 'void') return `HTTP/1.1 200 OK${NL}`;
  const root: SampleElement =
    operation.result === 'string'
      ? { name: 'string', attributes: xmlnsAttribute(ns), placeholder: 'string' }
      : { name: 'ArrayOfStudentInfo', attributes: xmlnsAttribute(ns), children: twoStudents };
  return [
    'HTTP/1.1 200 OK',
    'Content-Type: text/xml; charset=utf-8',
    `Content-Length: ${value('length')}`,
    '',
    XML_DECLARATION,
    ...sampleLines(root),
  ].join(NL);
}
