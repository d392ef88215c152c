/**
 * The HTML pages of `GET /X.asmx` and `GET /X.asmx?op=Op`, rendered after ASP.NET's
 * DefaultWsdlHelpGenerator.aspx (its structure, English texts and sample messages), from the contract
 * table rather than from a parsed WSDL. Windows line ends, as the .NET Framework writes them.
 */
import type { EndpointSpec, OperationSpec } from '../contract/operations';
import { escapeMarkup, htmlEncode } from '../basics/escape';
import type { Protocol } from '../config';
import { Soap11, Soap12 } from '../contract/soap-versions';
import { httpGetRequest, httpPostRequest, httpResponse, type Location, locate, soapRequest, soapResponse } from './help-samples';

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
  '          <p class="intro">Your XML Web service should be identified by a namespace that you control. For example, you can use your company\'s Internet domain name as part of the namespace. Although many XML Web service namespaces look like URLs, they need not point to actual resources on the Web. (XML Web service namespaces are URIs.)</p>',
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

/**
 * `GET /X.asmx?op=Op` for an operation of the service: test form and sample messages. `local` is
 * whether the caller is on this machine (transport/context.ts).
 */
export function operationHelpPage(
  serviceUrl: string,
  endpoint: EndpointSpec,
  ns: string,
  operation: OperationSpec,
  protocols: ReadonlySet<Protocol>,
  local: boolean,
): string {
  const location = locate(serviceUrl, endpoint);
  const op = escapeMarkup(operation.name);
  // ASP.NET hands its help generator the descriptions "with POST" (an HttpPost binding added for
  // HttpPostLocalhost) only for a local caller (DocumentationServerProtocol.WriteReturns); the form and
  // the HTTP POST sample come from that binding. A local caller shown no binding is told the form needs
  // primitive parameters, the generator's text for that case; a remote one that it is for local callers.
  const post = protocols.has('HttpPost') || (local && protocols.has('HttpPostLocalhost'));
  return page(endpoint, location, [
    '      <span>',
    `          <p class="intro">Click <a href="${location.file}">here</a> for a complete list of operations.</p>`,
    `          <h2>${op}</h2>`,
    '          <p class="intro"></p>',
    '',
    '          <h3>Test</h3>',
    '',
    ...(post
      ? ["          To test the operation using the HTTP POST protocol, click the 'Invoke' button.", '', ...testForm(location, operation)]
      : local
        ? ['          The test form is only available for methods with primitive types as parameters.', '']
        : ['          The test form is only available for requests from the local machine.', '']),
    ...[Soap11, Soap12]
      .filter((version) => protocols.has(version.protocol))
      .flatMap((version) =>
        section(`SOAP ${version.name}`, soapRequest(version, location, ns, operation), soapResponse(version, ns, operation)),
      ),
    ...(protocols.has('HttpGet') ? section('HTTP GET', httpGetRequest(location, operation), httpResponse(ns, operation)) : []),
    ...(post ? section('HTTP POST', httpPostRequest(location, operation), httpResponse(ns, operation)) : []),
    '      </span>',
  ]);
}

/**
 * `GET /X.asmx?op=..` naming no operation of the service (ASP.NET answers it with status 200). The
 * page shows the name through Server.HtmlEncode, Latin-1 letters as references.
 */
export function methodNotFoundPage(serviceUrl: string, endpoint: EndpointSpec, _ns: string, requested: string): string {
  const location = locate(serviceUrl, endpoint);
  return page(endpoint, location, [
    '      <span>',
    `          Click <a href="${location.file}">here</a> for a complete list of operations.`,
    '          <h2>Method Not Found</h2>',
    `          Method '${htmlEncode(decodeXmlName(requested))}' was not found in service ${escapeMarkup(endpoint.name)}.`,
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
