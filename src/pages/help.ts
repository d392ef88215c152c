/**
 * The HTML pages of `GET /X.asmx` and `GET /X.asmx?op=Op`, rendered after ASP.NET's
 * DefaultWsdlHelpGenerator.aspx (its structure, English texts and sample messages), from the contract
 * table rather than from a parsed WSDL. Windows line ends, as the .NET Framework writes them.
 */
import { type EndpointSpec, type OperationSpec, type ParamSpec, soapActionOf } from '../contract/operations';
import { STUDENT_FIELDS } from '../contract/types';
import { escapeMarkup } from '../basics/escape';
import { PROTOCOLS, type Protocol } from '../config';
import { Soap11, Soap12, type SoapVersion } from '../bindings/soap/versions';

const NL = '\r\n';
const TEMPURI = 'http://tempuri.org/';

const STYLE = [
  'BODY { color: #000000; background-color: white; font-family: Verdana; margin-left: 0px; margin-top: 0px; }',
  '#content { margin-left: 30px; font-size: .70em; padding-bottom: 2em; }',
  'A:link { color: #336699; font-weight: bold; text-decoration: underline; }',
  'A:visited { color: #6699cc; font-weight: bold; text-decoration: underline; }',
  'A:active { color: #336699; font-weight: bold; text-decoration: underline; }',
  'A:hover { color: cc3300; font-weight: bold; text-decoration: underline; }',
  'P { color: #000000; margin-top: 0px; margin-bottom: 12px; font-family: Verdana; }',
  'pre { background-color: #e5e5cc; padding: 5px; font-family: Courier New; font-size: x-small; margin-top: -5px; border: 1px #f0f0e0 solid; }',
  'td { color: #000000; font-family: Verdana; font-size: .7em; }',
  'h2 { font-size: 1.5em; font-weight: bold; margin-top: 25px; margin-bottom: 10px; border-top: 1px solid #003366; margin-left: -15px; color: #003366; }',
  'h3 { font-size: 1.1em; color: #000000; margin-left: -15px; margin-top: 10px; margin-bottom: 10px; }',
  'ul { margin-top: 10px; margin-left: 20px; }',
  'ol { margin-top: 10px; margin-left: 20px; }',
  'li { margin-top: 10px; color: #000000; }',
  'font.value { color: darkblue; font: bold; }',
  'font.key { color: darkgreen; font: bold; }',
  'font.error { color: darkred; font: bold; }',
  '.heading1 { color: #ffffff; font-family: Tahoma; font-size: 26px; font-weight: normal; background-color: #003366; margin-top: 0px; margin-bottom: 0px; margin-left: -30px; padding-top: 10px; padding-bottom: 3px; padding-left: 15px; width: 105%; }',
  '.button { background-color: #dcdcdc; font-family: Verdana; font-size: 1em; border-top: #cccccc 1px solid; border-bottom: #666666 1px solid; border-left: #cccccc 1px solid; border-right: #666666 1px solid; }',
  '.frmheader { color: #000000; background: #dcdcdc; font-family: Verdana; font-size: .7em; font-weight: normal; border-bottom: 1px solid #dcdcdc; padding-top: 2px; padding-bottom: 2px; }',
  '.frmtext { font-family: Verdana; font-size: .7em; margin-top: 8px; margin-bottom: 0px; margin-left: 32px; }',
  '.frmInput { font-family: Verdana; font-size: 1em; }',
  '.intro { margin-left: -15px; }',
].map((rule) => `\t\t${rule}`);

/** Shown by ASP.NET on the operation list of a service still in the default namespace. */
const TEMPURI_WARNING = [
  '      <span>',
  '          <hr>',
  `          <h3>This web service is using ${TEMPURI} as its default namespace.</h3>`,
  '          <h3>Recommendation: Change the default namespace before the XML Web service is made public.</h3>',
  `          <p class="intro">Each XML Web service needs a unique namespace in order for client applications to distinguish it from other services on the Web. ${TEMPURI} is available for XML Web services that are under development, but published XML Web services should use a more permanent namespace.</p>`,
  "          <p class=\"intro\">Your XML Web service should be identified by a namespace that you control. For example, you can use your company's Internet domain name as part of the namespace. Although many XML Web service namespaces look like URLs, they need not point to actual resources on the Web. (XML Web service namespaces are URIs.)</p>",
  '          <p class="intro">For XML Web services creating using ASP.NET, the default namespace can be changed using the WebService attribute\'s Namespace property. The WebService attribute is an attribute applied to the class that contains the XML Web service methods. Below is a code example that sets the namespace to "http://microsoft.com/webservices/":</p>',
  '          <p class="intro">C#</p>',
  '          <pre>[WebService(Namespace="http://microsoft.com/webservices/")]',
  'public class MyWebService {',
  '    // implementation',
  '}</pre>',
  '          <p class="intro">Visual Basic</p>',
  '          <pre>&lt;WebService(Namespace:="http://microsoft.com/webservices/")&gt; Public Class MyWebService',
  "    ' implementation",
  'End Class</pre>',
  '',
  '          <p class="intro">C++</p>',
  '          <pre>[WebService(Namespace="http://microsoft.com/webservices/")]',
  'public ref class MyWebService {',
  '    // implementation',
  '};</pre>',
  '          <p class="intro">For more details on XML namespaces, see the W3C recommendation on <a href="http://www.w3.org/TR/REC-xml-names/">Namespaces in XML</A>.</p>',
  '          <p class="intro">For more details on WSDL, see the <a href="http://www.w3.org/TR/wsdl">WSDL Specification</a>.</p>',
  '          <p class="intro">For more details on URIs, see <a href="http://www.ietf.org/rfc/rfc2396.txt">RFC 2396</a>.</p>',
  '      </span>',
];

const PLACEHOLDERS_TEXT = 'The <font class=value>placeholders</font> shown need to be replaced with actual values.';

/** The help page's samples name 1.2's envelope prefix `soap12`, where the service's answers say `soap` for both. */
const samplePrefix = (version: SoapVersion): string => (version === Soap12 ? 'soap12' : 'soap');

/** Where a page is served: what the samples and the test form need of the service URL. */
interface Location {
  /** The .asmx file name, the base of the page's relative links. */
  readonly file: string;
  /** Path of the .asmx as the client sees it, HTML-escaped. */
  readonly path: string;
  /** Host name without port, HTML-escaped: ASP.NET shows the address's Uri.Host. */
  readonly host: string;
  /** The service URL, HTML-escaped. */
  readonly url: string;
}

function locate(serviceUrl: string, endpoint: EndpointSpec): Location {
  const url = new URL(serviceUrl);
  return {
    file: escapeMarkup(`${endpoint.name}.asmx`),
    path: escapeMarkup(url.pathname),
    host: escapeMarkup(url.hostname),
    url: escapeMarkup(serviceUrl),
  };
}

function page(endpoint: EndpointSpec, location: Location, content: readonly string[]): string {
  const name = escapeMarkup(endpoint.name);
  return [
    '<html>',
    '',
    '  <head>',
    `    <link rel="alternate" type="text/xml" href="${location.path}?disco" />`,
    '',
    '    <style type="text/css">',
    ...STYLE,
    '    </style>',
    '',
    `    <title>${name} Web Service</title>`,
    '',
    '  </head>',
    '',
    '  <body>',
    '',
    '    <div id="content">',
    '',
    `      <p class="heading1">${name}</p><br>`,
    '',
    ...content,
    '',
    '    </div>',
    '',
    '  </body>',
    '</html>',
    '',
  ].join(NL);
}

/** `GET /X.asmx`: the service name, a link to the WSDL and the operations, ordinal order. */
export function serviceHelpPage(serviceUrl: string, endpoint: EndpointSpec, ns: string): string {
  const location = locate(serviceUrl, endpoint);
  const operations = endpoint.operations.map((op) => op.name).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return page(endpoint, location, [
    '      <span>',
    '',
    `          <p class="intro">The following operations are supported.  For a formal definition, please review the <a href="${location.file}?WSDL">Service Description</a>. </p>`,
    '',
    '              <ul>',
    ...operations.flatMap((name) => [
      '              <li>',
      `                <a href="${location.file}?op=${encodeURIComponent(name)}">${escapeMarkup(name)}</a>`,
      '              </li>',
    ]),
    '              </ul>',
    '',
    '      </span>',
    ...(ns === TEMPURI ? ['', ...TEMPURI_WARNING] : []),
  ]);
}

/** `GET /X.asmx?op=Op` for an operation of the service: test form and sample messages. */
export function operationHelpPage(
  serviceUrl: string,
  endpoint: EndpointSpec,
  ns: string,
  operation: OperationSpec,
  protocols: ReadonlySet<Protocol> = new Set(PROTOCOLS),
): string {
  const location = locate(serviceUrl, endpoint);
  const op = escapeMarkup(operation.name);
  // Only the enabled protocols have samples, and the test form needs HTTP POST.
  return page(endpoint, location, [
    '      <span>',
    `          <p class="intro">Click <a href="${location.file}">here</a> for a complete list of operations.</p>`,
    `          <h2>${op}</h2>`,
    '          <p class="intro"></p>',
    '',
    '          <h3>Test</h3>',
    '',
    ...(protocols.has('HttpPost')
      ? ["          To test the operation using the HTTP POST protocol, click the 'Invoke' button.", '', ...testForm(location, operation)]
      : // What ASP.NET shows a remote client when the WSDL has no HTTP POST binding.
        ['          The test form is only available for requests from the local machine.', '']),
    ...[Soap11, Soap12].filter((version) => protocols.has(version.protocol)).flatMap((version) =>
      section(`SOAP ${version.name}`, soapRequest(version, location, ns, operation), soapResponse(version, ns, operation)),
    ),
    ...(protocols.has('HttpGet') ? section('HTTP GET', httpGetRequest(location, operation), httpResponse(ns, operation)) : []),
    ...(protocols.has('HttpPost') ? section('HTTP POST', httpPostRequest(location, operation), httpResponse(ns, operation)) : []),
    '      </span>',
  ]);
}

/** `GET /X.asmx?op=..` naming no operation of the service (ASP.NET answers it with status 200). */
export function methodNotFoundPage(serviceUrl: string, endpoint: EndpointSpec, _ns: string, requested: string): string {
  const location = locate(serviceUrl, endpoint);
  return page(endpoint, location, [
    '      <span>',
    `          Click <a href="${location.file}">here</a> for a complete list of operations.`,
    '          <h2>Method Not Found</h2>',
    `          Method '${escapeMarkup(decodeXmlName(requested))}' was not found in service ${escapeMarkup(endpoint.name)}.`,
    '      </span>',
  ]);
}

/** XmlConvert.DecodeName, which the help page applies to the requested name before showing it. */
function decodeXmlName(name: string): string {
  return name.replace(/_x([0-9A-Fa-f]{8}|[0-9A-Fa-f]{4})_/g, (whole, hex: string) => {
    const code = parseInt(hex, 16);
    return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

function testForm(location: Location, operation: OperationSpec): string[] {
  const action = `${location.url}/${escapeMarkup(operation.name)}`;
  return [
    `          <form target="_blank" action='${action}' method="POST">`,
    '            <table cellspacing="0" cellpadding="4" frame="box" bordercolor="#dcdcdc" rules="none" style="border-collapse: collapse;">',
    ...(operation.params.length === 0
      ? []
      : [
          '            <tr>',
          '              <td class="frmHeader" background="#dcdcdc" style="border-right: 2px solid white;">Parameter</td>',
          '              <td class="frmHeader" background="#dcdcdc">Value</td>',
          '            </tr>',
        ]),
    ...operation.params.flatMap((param) => {
      const name = escapeMarkup(param.name);
      return [
        '            <tr>',
        `              <td class="frmText" style="color: #000000; font-weight: normal;">${name}:</td>`,
        `              <td><input class="frmInput" type="text" size="50" name="${name}"></td>`,
        '            </tr>',
      ];
    }),
    '            <tr>',
    '              <td></td>',
    '              <td align="right"> <input type="submit" value="Invoke" class="button"></td>',
    '            </tr>',
    '            </table>',
    '          </form>',
    '',
  ];
}

function section(title: string, request: string, response: string): string[] {
  return [
    '          <span>',
    `              <h3>${title}</h3>`,
    `              <p>The following is a sample ${title} request and response.  ${PLACEHOLDERS_TEXT}</p>`,
    '',
    `              <pre>${request}</pre>`,
    '',
    `              <pre>${response}</pre>`,
    '          </span>',
    '',
  ];
}

// ---- Sample messages: XML as XmlTextWriter indents it, shown HTML-escaped with placeholders ----

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

function soapRequest(version: SoapVersion, location: Location, ns: string, operation: OperationSpec): string {
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

function soapResponse(version: SoapVersion, ns: string, operation: OperationSpec): string {
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

function httpGetRequest(location: Location, operation: OperationSpec): string {
  // The '?' is written even when there is no parameter, as ASP.NET does.
  return [`GET ${location.path}/${escapeMarkup(operation.name)}?${formPairs(operation)} HTTP/1.1`, `Host: ${location.host}`, ''].join(NL);
}

function httpPostRequest(location: Location, operation: OperationSpec): string {
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
function httpResponse(ns: string, operation: OperationSpec): string {
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
