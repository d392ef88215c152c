import { quotedPiece } from './request-validation';

/**
 * Every fault and error text the service can answer, in the words of an ASP.NET ASMX host. Each
 * binding renders an AsmxError its own way (a SOAP 1.1 or 1.2 fault, or an HTTP text error, whose
 * every message is HTML-encoded as it is written); the wording lives only here, as plain text.
 * One file past 300 lines on purpose: the catalogue is read as a whole, one place for every text.
 */

/**
 * Who is to blame, in SOAP 1.1 words. SOAP 1.2 renames Client/Server to Sender/Receiver: each
 * version's fault codes are in its entry of the SOAP version table (Soap11, Soap12).
 */
export type FaultSide = 'Client' | 'Server' | 'VersionMismatch' | 'MustUnderstand';

export class AsmxError extends Error {
  /** Why, for the request's log line: never a parameter's value (a code, a phone). */
  readonly reason: string;
  /**
   * @param side who is to blame, for the SOAP fault code
   * @param chain the messages from outermost to innermost, as .NET joins inner exceptions
   * @param reason the log's words, where the chain would echo a value or say nothing an operator can use;
   *   by default the chain without the generic wrappers
   */
  constructor(
    readonly side: FaultSide,
    readonly chain: readonly string[],
    reason?: string,
  ) {
    super(chain.join(' ---> '));
    this.name = 'AsmxError';
    this.reason = reason ?? (chain.filter((m) => m !== PROCESS && m !== READ).join(' ---> ') || this.message);
  }
}

const SOAP11_ENVELOPE = 'http://schemas.xmlsoap.org/soap/envelope/';

/** The texts .NET writes for an exception whose message it does not own (ours never leak). */
const PROCESS = 'Server was unable to process request.';
const READ = 'Server was unable to read request.';
const COLLECTION_FULL = 'Operation is not valid due to the current state of the object.';
/** HttpRequest's refusal of a body over maxRequestLength. */
const TOO_LARGE = 'Maximum request length exceeded.';

export const Errors = {
  // SOAP routing
  soapActionUnknown: (value: string) =>
    new AsmxError('Client', [`Server did not recognize the value of HTTP Header SOAPAction: ${value}.`]),
  noValidAction: () =>
    new AsmxError('Client', ['Unable to handle request without a valid action parameter. Please supply a valid soap action.']),
  actionNotRecognized: (action: string) =>
    new AsmxError('Client', [`Unable to handle request. The action '${action}' was not recognized.`]),
  versionMismatch: (envelopeNs: string, expecting: string = SOAP11_ENVELOPE) =>
    new AsmxError('VersionMismatch', [
      `Possible SOAP version mismatch: Envelope namespace ${envelopeNs} was unexpected. Expecting ${expecting}.`,
    ]),

  mustUnderstand: (header: string) => new AsmxError('MustUnderstand', [`SOAP header ${header} was not understood.`]),
  /**
   * No soap:Body. Found while reading parameters it is the client's fault; found while routing
   * (no SOAPAction or action parameter named the operation) the server could not process it.
   */
  missingBody: (whileRouting: boolean) =>
    whileRouting
      ? new AsmxError('Server', [PROCESS, 'Request format is invalid: Missing required soap:Body element.'])
      : new AsmxError('Client', [READ, 'Request format is invalid: Missing required soap:Body element.']),
  /** The root element is not an Envelope (in a SOAP namespace); read while routing or while reading parameters, as missingBody. */
  missingEnvelope: (whileRouting: boolean) =>
    whileRouting
      ? new AsmxError('Server', [PROCESS, 'Request format is invalid: Missing required soap:Envelope element.'])
      : new AsmxError('Client', [READ, 'Request format is invalid: Missing required soap:Envelope element.']),

  // SOAP request reading: a parameter that does not convert
  badXmlValue: (line: number, column: number, reasons: readonly string[]) =>
    new AsmxError('Client', [READ, `There is an error in XML document (${line}, ${column}).`, ...reasons]),
  /** The request is not well-formed XML (or has a DTD, or an unknown encoding): the reader's messages are the cause. */
  unreadableXml: (...reasons: readonly string[]) => new AsmxError('Server', [PROCESS, ...reasons]),
  /**
   * A body over the size limit, as the SOAP handler meets it. Routed by SOAPAction (SOAP 1.1), the
   * body is first read by the SOAP extension chain, which wraps the refusal; on the SOAP 1.2 routing
   * path the router reads it and the refusal is the cause of an unprocessable request.
   */
  soapTooLarge: (whileRouting: boolean) =>
    new AsmxError(
      'Server',
      [whileRouting ? PROCESS : 'There was an exception running the extensions specified in the config file.', TOO_LARGE],
      'body over MAX_BODY_BYTES',
    ),
  /** A form body over the size limit (HTTP POST). */
  formTooLarge: () => new AsmxError('Server', [TOO_LARGE], 'body over MAX_BODY_BYTES'),
  /**
   * A failure inside an operation. The cause is a fixed, generic text: the real error goes to the
   * log, never to the client (no paths, SQL or stack frames).
   */
  internal: () => new AsmxError('Server', [PROCESS, 'An internal error occurred while processing the request.']),

  // HTTP GET/POST
  missingParameter: (name: string) => new AsmxError('Client', [`Missing parameter: ${name}.`]),
  methodNotValid: (op: string) => new AsmxError('Client', [`${op} Web Service method name is not valid.`]),
  methodCase: (asked: string, real: string) =>
    new AsmxError('Client', [
      `Invalid method name '${asked}',  method names are case sensitive.   ` +
        `The method name '${real}' with the same name but different casing was found.\r\n` +
        'Parameter name: methodName',
    ]),
  cannotConvertChar: (value: string) =>
    new AsmxError(
      'Client',
      [`Cannot convert ${value} to System.Char.\r\nParameter name: type`, 'String must be exactly one character long.'],
      'char parameter is not one character',
    ),
  requestFormatInvalid: (contentType: string) => new AsmxError('Client', [`Request format is invalid: ${contentType}.`]),
  /**
   * More distinct names in a query string or form than ASP.NET's MaxHttpCollectionKeys allows. The
   * form is read through Request.Form, which wraps the collection's refusal in an HttpException.
   */
  tooManyKeys: (collection: 'QueryString' | 'Form') =>
    new AsmxError(
      'Client',
      collection === 'Form' ? ['The URL-encoded form data is not valid.', COLLECTION_FULL] : [COLLECTION_FULL],
      `more names in the ${collection === 'Form' ? 'form' : 'query string'} than MAX_FORM_KEYS`,
    ),

  /**
   * ASP.NET request validation (HttpRequest.ValidateString): the collection, the name (none for a
   * segment without `=`) and the piece of the value around `at`, where it looked dangerous. So a
   * long value is never repeated whole.
   */
  dangerousValue: (collection: 'QueryString' | 'Form', name: string | null, value: string, at: number) =>
    new AsmxError(
      'Client',
      [`A potentially dangerous Request.${collection} value was detected from the client (${name ?? ''}="${quotedPiece(value, at)}").`],
      `potentially dangerous value in ${collection === 'Form' ? 'form' : 'query string'} ${name === null ? 'item without a name' : `field ${name}`}`,
    ),
} as const;

/** The reasons .NET gives when a UInt16 does not parse; used by the char rule. */
export const NumberReasons = {
  format: ['Input string was not in a correct format.'],
  overflow: ['Value was either too large or too small for a UInt16.'],
  /** UInt16 parsing goes through UInt32, whose own overflow becomes the inner exception. */
  overflow32: ['Value was either too large or too small for a UInt16.', 'Value was either too large or too small for a UInt32.'],
} as const;

/** The XML parser messages we mirror from .NET's XmlReader, where clients see them. */
export const ParserMessages = {
  rootMissing: 'Root element is missing.',
  dtdProhibited: 'DTD is prohibited in this XML document.',
  invalidRootData: 'Data at the root level is invalid.',
  unclosedLiteral: 'There is an unclosed literal string.',
  unexpectedEof: 'Unexpected end of file has occurred.',
  undeclaredPrefix: (prefix: string) => `'${prefix}' is an undeclared prefix.`,
  multipleRoots: 'There are multiple root elements.',
  tagMismatch: (start: string, line: number, column: number, end: string) =>
    `The '${start}' start tag on line ${line} position ${column} does not match the end tag of '${end}'.`,
  /** A character XML 1.0 does not allow, raw or as a reference (`c` as XmlException shows it, `hex` 0x..). */
  invalidCharacter: (c: string, hex: string) => `'${c}', hexadecimal value ${hex}, is an invalid character.`,
  invalidCommentChars: "An XML comment cannot contain '--', and '-' cannot be the last character.",
  /** Bytes the reader's UTF-8 decoder refuses (XmlTextReaderImpl.InvalidCharRecovery). */
  invalidInEncoding: 'Invalid character in the given encoding.',
  nameStart: (c: string, hex: string) => `Name cannot begin with the '${c}' character, hexadecimal value ${hex}.`,
  nameChar: (c: string, hex: string) => `The '${c}' character, hexadecimal value ${hex}, cannot be included in a name.`,
  unexpectedToken: (token: string, expected: string) => `'${token}' is an unexpected token. The expected token is '${expected}'.`,
  unexpectedTokens: (token: string, first: string, second: string) =>
    `'${token}' is an unexpected token. The expected token is '${first}' or '${second}'.`,
  invalidVersion: (version: string) => `Version number '${version}' is invalid.`,
  invalidDeclaration: 'Syntax for an XML declaration is invalid.',
  declarationNotFirst:
    'Unexpected XML declaration. The XML declaration must be the first node in the document, and no white space characters are allowed to appear before it.',
  invalidPIName: (name: string) => `'${name}' is an invalid name for processing instructions.`,
  noByteOrderMark: 'There is no Unicode byte order mark. Cannot switch to Unicode.',
  /** An XML declaration naming an encoding .NET lacks: the reader's error, then Encoding.GetEncoding's. */
  unsupportedEncoding: (name: string, line: number, column: number): readonly string[] => [
    `System does not support '${name}' encoding. Line ${line}, position ${column}.`,
    `'${name}' is not a supported encoding name. For information on defining a custom encoding, see the documentation for the Encoding.RegisterProvider method.\r\nParameter name: name`,
  ],
  /**
   * Past the service's XML limits (see scan.ts). .NET's reader has no such limits, so there is no
   * wording of its own: these follow its style, and the request is refused like any unreadable one.
   */
  tooDeep: (max: number) => `The XML document is nested more than ${max} elements deep.`,
  tooManyElements: (max: number) => `The XML document has more than ${max} elements.`,
} as const;

/**
 * Answers given before ASP.NET sees a request: by http.sys, IIS's kernel listener (malformed or
 * oversized request lines and headers, time-outs), and by IIS itself (request filtering, and the
 * handlers IIS runs for what ASP.NET does not handle), as a remote client sees them.
 */
export interface HostError {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
  /** Headers the answer carries besides its type and length (IIS's Allow on a 405). */
  readonly headers?: Readonly<Record<string, string>>;
}

function httpSysPage(status: number, title: string, heading: string, text: string): HostError {
  const body =
    '<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01//EN""http://www.w3.org/TR/html4/strict.dtd">\r\n' +
    `<HTML><HEAD><TITLE>${title}</TITLE>\r\n` +
    '<META HTTP-EQUIV="Content-Type" Content="text/html; charset=us-ascii"></HEAD>\r\n' +
    `<BODY><h2>${heading}</h2>\r\n<hr><p>HTTP Error ${status}. ${text}</p>\r\n</BODY></HTML>\r\n`;
  return { status, contentType: 'text/html; charset=us-ascii', body };
}

/**
 * IIS's custom error page for a status (%SystemDrive%\inetpub\custerr\en-US\<status>.htm), what a
 * remote client sees with errorMode DetailedLocalOnly, the default: the same page whatever the
 * substatus (404.0, 404.11, 404.15...). Sent as `text/html`, CRLF line ends and a CRLF at the end.
 */
function iisPage(heading: string, text: string): string {
  return [
    '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">',
    '<html xmlns="http://www.w3.org/1999/xhtml">',
    '<head>',
    '<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1"/>',
    `<title>${heading}</title>`,
    '<style type="text/css">',
    '<!--',
    'body{margin:0;font-size:.7em;font-family:Verdana, Arial, Helvetica, sans-serif;background:#EEEEEE;}',
    'fieldset{padding:0 15px 10px 15px;} ',
    'h1{font-size:2.4em;margin:0;color:#FFF;}',
    'h2{font-size:1.7em;margin:0;color:#CC0000;} ',
    'h3{font-size:1.2em;margin:10px 0 0 0;color:#000000;} ',
    '#header{width:96%;margin:0 0 0 0;padding:6px 2% 6px 2%;font-family:"trebuchet MS", Verdana, sans-serif;color:#FFF;',
    'background-color:#555555;}',
    '#content{margin:0 0 0 2%;position:relative;}',
    '.content-container{background:#FFF;width:96%;margin-top:8px;padding:10px;position:relative;}',
    '-->',
    '</style>',
    '</head>',
    '<body>',
    '<div id="header"><h1>Server Error</h1></div>',
    '<div id="content">',
    ' <div class="content-container"><fieldset>',
    `  <h2>${heading}</h2>`,
    `  <h3>${text}</h3>`,
    ' </fieldset></div>',
    '</div>',
    '</body>',
    '</html>',
    '',
  ].join('\r\n');
}

const iis = (status: number, heading: string, text: string, headers?: Record<string, string>): HostError => ({
  status,
  contentType: 'text/html',
  body: iisPage(heading, text),
  ...(headers === undefined ? {} : { headers }),
});

const IIS_NOT_FOUND: HostError = iis(
  404,
  '404 - File or directory not found.',
  'The resource you are looking for might have been removed, had its name changed, or is temporarily unavailable.',
);

export const HostErrors = {
  /** A malformed %-escape, a control character, a `..` above the root or an over-long segment. */
  invalidUrl: () => httpSysPage(400, 'Bad Request', 'Bad Request - Invalid URL', 'The request URL is invalid.'),
  badRequest: () => httpSysPage(400, 'Bad Request', 'Bad Request', 'The request is badly formed.'),
  /**
   * A header http.sys takes once (Host among them) sent twice. Its page for a header it cannot
   * accept; its parser refuses a repeated single-valued header (a second User-Agent too) this way.
   */
  invalidHeader: () => httpSysPage(400, 'Bad Request', 'Bad Request - Invalid Header', 'The request has an invalid header name.'),
  headersTooLong: () => httpSysPage(400, 'Bad Request', 'Bad Request - Request Too Long', 'The size of the request headers is too long.'),
  urlTooLong: () => httpSysPage(414, 'Request URL Too Long', 'Request URL Too Long', 'The request URL is too long.'),
  /** The application behind http.sys cannot run (its pool stopped): what an Express mount answers when it could not start. */
  unavailable: () => httpSysPage(503, 'Service Unavailable', 'Service Unavailable', 'The service is unavailable.'),
  /** A client that did not send its whole request in time (http.sys's entity-body and header timers). */
  timeout: () => httpSysPage(408, 'Request Timeout', 'Request Timeout', 'The request timed out.'),
  /** Request filtering's refusals: 404.14 (URL too long), 404.15 (query string too long), 404.11 (double escaping). */
  filtered: (): HostError => IIS_NOT_FOUND,
  /** No such file: IIS's static file handler, for every path that names nothing ASP.NET serves (404.0). */
  notFound: (): HostError => IIS_NOT_FOUND,
  /** The application's directory, which has no default document and no directory listing (403.14). */
  forbidden: (): HostError =>
    iis(
      403,
      '403 - Forbidden: Access is denied.',
      'You do not have permission to view this directory or page using the credentials that you supplied.',
    ),
  /**
   * A method the handler mappings give to no one but the static file handler (PUT, DELETE, an unknown
   * one), on a file or directory that exists (405.0): the static file handler's Allow with it.
   */
  methodNotAllowed: (): HostError =>
    iis(
      405,
      '405 - HTTP verb used to access this page is not allowed.',
      'The page you are looking for cannot be displayed because an invalid method (HTTP verb) was used to attempt access.',
      {
        Allow: 'GET, HEAD, OPTIONS, TRACE',
      },
    ),
  /** TRACE: IIS's TRACEVerbHandler (ProtocolSupportModule) does not echo the request. */
  notImplemented: (): HostError =>
    iis(
      501,
      '501 - Header values specify a method that is not implemented.',
      'The page you are looking for cannot be displayed because a header value in the request does not match certain configuration settings on the Web server. For example, a request header might specify a POST to a static file that cannot be posted to, or specify a Transfer-Encoding value that cannot make use of compression.',
    ),
  /** IIS's reverse proxy (ARR) when the server behind it gives no answer: what a legacy-first front answers then. */
  badGateway: (): HostError =>
    iis(
      502,
      '502 - Web server received an invalid response while acting as a gateway or proxy server.',
      'There is a problem with the page you are looking for, and it cannot be displayed. When the Web server (while acting as a gateway or proxy) contacted the upstream content server, it received an invalid response from the content server.',
    ),
} as const;
