import { escapeMarkup } from './escape';

/**
 * Every fault and error text the service can answer, in the words of an ASP.NET ASMX host. Each
 * binding renders an AsmxError its own way (a SOAP 1.1 or 1.2 fault, or an HTTP text error); the
 * wording lives only here.
 */

/**
 * Who is to blame, in SOAP 1.1 words. SOAP 1.2 renames Client/Server to Sender/Receiver; see
 * `soapVersions` in bindings/soap/versions.ts.
 */
export type FaultSide = 'Client' | 'Server' | 'VersionMismatch' | 'MustUnderstand';

export class AsmxError extends Error {
  /**
   * @param side who is to blame, for the SOAP fault code
   * @param chain the messages from outermost to innermost, as .NET joins inner exceptions
   */
  constructor(
    readonly side: FaultSide,
    readonly chain: readonly string[],
  ) {
    super(chain.join(' ---> '));
    this.name = 'AsmxError';
  }
}

const SOAP11_ENVELOPE = 'http://schemas.xmlsoap.org/soap/envelope/';

/** The texts .NET writes for an exception whose message it does not own (ours never leak). */
const PROCESS = 'Server was unable to process request.';
const READ = 'Server was unable to read request.';

export const Errors = {
  // SOAP routing
  soapActionUnknown: (value: string) =>
    new AsmxError('Client', [`Server did not recognize the value of HTTP Header SOAPAction: ${value}.`]),
  noValidAction: () =>
    new AsmxError('Client', [
      'Unable to handle request without a valid action parameter. Please supply a valid soap action.',
    ]),
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

  // SOAP request reading: a parameter that does not convert
  badXmlValue: (line: number, column: number, reasons: readonly string[]) =>
    new AsmxError('Client', [READ, `There is an error in XML document (${line}, ${column}).`, ...reasons]),
  /** The request is not well-formed XML (or has a DTD): the parser's message is the cause. */
  unreadableXml: (parserMessage: string) => new AsmxError('Server', [PROCESS, parserMessage]),
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
      `Invalid method name &#39;${escapeMarkup(asked)}&#39;,  method names are case sensitive.   ` +
        `The method name &#39;${escapeMarkup(real)}&#39; with the same name but different casing was found.\r\n` +
        'Parameter name: methodName',
    ]),
  cannotConvertChar: (value: string) =>
    new AsmxError('Client', [
      `Cannot convert ${value} to System.Char.\r\nParameter name: type`,
      'String must be exactly one character long.',
    ]),
  requestFormatInvalid: (contentType: string) =>
    new AsmxError('Client', [`Request format is invalid: ${contentType}.`]),
  /** ASP.NET request validation, whose whole message is HTML-encoded. */
  dangerousValue: (collection: 'QueryString' | 'Form', name: string, value: string) =>
    new AsmxError('Client', [
      escapeMarkup(`A potentially dangerous Request.${collection} value was detected from the client (${name}="${value}").`),
    ]),
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
} as const;
