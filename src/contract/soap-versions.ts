import type { AsmxError, FaultSide } from '../basics/errors';
import { escapeText } from '../basics/escape';

/**
 * SOAP 1.1 and 1.2 as data. Both are written the way ASMX writes them (prefix `soap`, xsi and xsd
 * declared on the envelope); 1.2 differs only in its envelope namespace, media type, fault codes and
 * fault shape.
 */
export interface SoapVersion {
  readonly name: '1.1' | '1.2';
  /** The web.config protocol (PROTOCOLS) that switches it on. */
  readonly protocol: 'HttpSoap' | 'HttpSoap12';
  readonly envelopeNs: string;
  /** Whether the operation is named in a SOAPAction header (1.1) rather than the media type's action (1.2). */
  readonly soapActionHeader: boolean;
  /** The answer's Content-Type. */
  readonly contentType: string;
  /** A whole answer envelope around one Body child. */
  envelope(bodyContent: string): string;
  /**
   * A whole fault envelope. A version mismatch lists in a SOAP 1.2 Upgrade header the envelopes
   * understood (`upgrade`, both by default; none: no header).
   */
  fault(error: AsmxError, upgrade?: readonly SoapVersion['name'][]): string;
}

const DECLARATION = '<?xml version="1.0" encoding="utf-8"?>';
const SUPPORTED_ENVELOPE = {
  '1.1': '<soap12:SupportedEnvelope qname="soap:Envelope" xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" />',
  '1.2': '<soap12:SupportedEnvelope qname="soap12:Envelope" xmlns:soap12="http://www.w3.org/2003/05/soap-envelope" />',
} as const;

function upgradeHeader(versions: readonly SoapVersion['name'][]): string {
  if (versions.length === 0) return '';
  const supported = versions.map((v) => SUPPORTED_ENVELOPE[v]).join('');
  return `<soap:Header><soap12:Upgrade xmlns:soap12="http://www.w3.org/2003/05/soap-envelope">${supported}</soap12:Upgrade></soap:Header>`;
}
const XSI_XSD = 'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema"';

function makeVersion(
  name: SoapVersion['name'],
  protocol: SoapVersion['protocol'],
  envelopeNs: string,
  mediaType: string,
  faultBody: (code: string, text: string, detail: boolean) => string,
  codes: Record<FaultSide, string>,
): SoapVersion {
  const open = `${DECLARATION}<soap:Envelope xmlns:soap="${envelopeNs}" ${XSI_XSD}>`;
  const head = `${open}<soap:Body>`;
  const tail = '</soap:Body></soap:Envelope>';
  return {
    name,
    protocol,
    envelopeNs,
    soapActionHeader: name === '1.1',
    contentType: `${mediaType}; charset=utf-8`,
    envelope: (bodyContent) => head + bodyContent + tail,
    fault: (error, upgrade = ['1.1', '1.2']) => {
      const text = escapeText(error.message);
      // A version mismatch tells the client which envelopes are understood (SOAP 1.2 Upgrade).
      if (error.side === 'VersionMismatch')
        return `${open}${upgradeHeader(upgrade)}<soap:Body>${faultBody(codes[error.side], text, true)}${tail}`;
      // A header fault carries no detail: detail is only for faults about the Body.
      return head + faultBody(codes[error.side], text, error.side !== 'MustUnderstand') + tail;
    },
  };
}

export const Soap11 = makeVersion(
  '1.1',
  'HttpSoap',
  'http://schemas.xmlsoap.org/soap/envelope/',
  'text/xml',
  (code, text, detail) =>
    `<soap:Fault><faultcode>${code}</faultcode><faultstring>${text}</faultstring>${detail ? '<detail />' : ''}</soap:Fault>`,
  { Client: 'soap:Client', Server: 'soap:Server', VersionMismatch: 'soap:VersionMismatch', MustUnderstand: 'soap:MustUnderstand' },
);

export const Soap12 = makeVersion(
  '1.2',
  'HttpSoap12',
  'http://www.w3.org/2003/05/soap-envelope',
  'application/soap+xml',
  (code, text, detail) =>
    `<soap:Fault><soap:Code><soap:Value>${code}</soap:Value></soap:Code>` +
    `<soap:Reason><soap:Text xml:lang="en">${text}</soap:Text></soap:Reason>${detail ? '<soap:Detail />' : ''}</soap:Fault>`,
  { Client: 'soap:Sender', Server: 'soap:Receiver', VersionMismatch: 'soap:VersionMismatch', MustUnderstand: 'soap:MustUnderstand' },
);

export function versionOfEnvelope(ns: string | null): SoapVersion | null {
  return ns === Soap11.envelopeNs ? Soap11 : ns === Soap12.envelopeNs ? Soap12 : null;
}
