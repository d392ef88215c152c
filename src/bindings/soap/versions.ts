import type { AsmxError, FaultSide } from '../../errors';
import { escapeText } from '../answers';

/**
 * SOAP 1.1 and 1.2 as data. Both are written the way ASMX writes them (prefix `soap`, xsi and xsd
 * declared on the envelope); 1.2 differs only in its envelope namespace, media type, fault codes and
 * fault shape.
 */
export interface SoapVersion {
  readonly name: '1.1' | '1.2';
  readonly envelopeNs: string;
  /** The answer's Content-Type. */
  readonly contentType: string;
  /** A whole answer envelope around one Body child. */
  envelope(bodyContent: string): string;
  /** A whole fault envelope. */
  fault(error: AsmxError): string;
}

const DECLARATION = '<?xml version="1.0" encoding="utf-8"?>';
const XSI_XSD = 'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema"';

function makeVersion(
  name: SoapVersion['name'],
  envelopeNs: string,
  mediaType: string,
  faultBody: (code: string, text: string) => string,
  codes: Record<FaultSide, string>,
): SoapVersion {
  const head = `${DECLARATION}<soap:Envelope xmlns:soap="${envelopeNs}" ${XSI_XSD}><soap:Body>`;
  const tail = '</soap:Body></soap:Envelope>';
  return {
    name,
    envelopeNs,
    contentType: `${mediaType}; charset=utf-8`,
    envelope: (bodyContent) => head + bodyContent + tail,
    fault: (error) => head + faultBody(codes[error.side], escapeText(error.message)) + tail,
  };
}

export const Soap11 = makeVersion(
  '1.1',
  'http://schemas.xmlsoap.org/soap/envelope/',
  'text/xml',
  (code, text) => `<soap:Fault><faultcode>${code}</faultcode><faultstring>${text}</faultstring><detail /></soap:Fault>`,
  { Client: 'soap:Client', Server: 'soap:Server', VersionMismatch: 'soap:VersionMismatch' },
);

export const Soap12 = makeVersion(
  '1.2',
  'http://www.w3.org/2003/05/soap-envelope',
  'application/soap+xml',
  (code, text) =>
    `<soap:Fault><soap:Code><soap:Value>${code}</soap:Value></soap:Code>` +
    `<soap:Reason><soap:Text xml:lang="en">${text}</soap:Text></soap:Reason><soap:Detail /></soap:Fault>`,
  { Client: 'soap:Sender', Server: 'soap:Receiver', VersionMismatch: 'soap:VersionMismatch' },
);

export function versionOfEnvelope(ns: string | null): SoapVersion | null {
  return ns === Soap11.envelopeNs ? Soap11 : ns === Soap12.envelopeNs ? Soap12 : null;
}
