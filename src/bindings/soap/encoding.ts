import { ASCII, byteOrderMark, type Charset, charsetNamed, decodeWithBom, UTF8 } from '../../basics/charset';
import { ParserMessages } from '../../basics/errors';
import { lineAndColumn } from './scan';

export type DecodedEnvelope = { ok: true; text: string } | { ok: false; reasons: readonly string[] };

/**
 * The text of a SOAP request as ASMX reads it (SoapServerProtocol.GetReaderForMessage and
 * RequestResponseUtils.GetEncoding2):
 * - a Content-Type charset that .NET knows decides, unless a byte-order mark says otherwise;
 * - otherwise a `text/*` request is ASCII (RFC 3023's default; non-ASCII bytes read as '?'), again
 *   unless a byte-order mark says otherwise, and its XML declaration is not looked at;
 * - otherwise (`application/soap+xml`) the XML reader decides from the bytes: a byte-order mark or
 *   the UTF-16/32 pattern of `<`, then the XML declaration's `encoding`, then UTF-8. A declared
 *   encoding .NET does not support is the reader's error.
 */
export function decodeEnvelope(body: Buffer, application: boolean, charset: string | undefined): DecodedEnvelope {
  const named = charset ? charsetNamed(charset) : null;
  if (named !== null) return { ok: true, text: decodeWithBom(body, named) };
  if (!application) return { ok: true, text: decodeWithBom(body, ASCII) };
  return readXmlDocument(body);
}

const WIDE_NAMES = new Set(['utf-16', 'ucs-2', 'iso-10646-ucs-2']);

function readXmlDocument(body: Buffer): DecodedEnvelope {
  const bom = byteOrderMark(body);
  const bytes = body.subarray(bom?.length ?? 0);
  const detected = bom?.charset ?? unmarkedWide(bytes);
  if (detected?.wide) return { ok: true, text: detected.decode(bytes) };

  const declared = declaredEncoding(bytes);
  if (declared === null) return { ok: true, text: UTF8.decode(bytes) };
  const lower = declared.name.toLowerCase();
  // A one-byte document cannot declare itself two-byte; `ucs-4` is ignored by the reader.
  if (WIDE_NAMES.has(lower)) return { ok: false, reasons: [ParserMessages.noByteOrderMark] };
  if (lower === 'ucs-4' || lower === 'utf-8') return { ok: true, text: UTF8.decode(bytes) };
  const charset = charsetNamed(declared.name);
  if (charset === null) {
    const { line, column } = lineAndColumn(bytes.toString('latin1'), declared.index);
    return { ok: false, reasons: ParserMessages.unsupportedEncoding(declared.name, line, column) };
  }
  return { ok: true, text: charset.decode(bytes) };
}

/** UTF-16 or UTF-32 without a mark, recognised as XmlTextReader does by how `<` is written. */
function unmarkedWide(bytes: Buffer): Charset | null {
  const [a, b, c, d] = bytes;
  if (a === 0x3c && b === 0) return charsetNamed(c === 0 && d === 0 ? 'utf-32le' : 'utf-16le');
  if (a === 0 && b === 0x3c) return charsetNamed('utf-16be');
  if (a === 0 && b === 0 && c === 0 && d === 0x3c) return charsetNamed('utf-32be');
  return null;
}

const DECLARATION = /^<\?xml[ \t\r\n]+version[ \t\r\n]*=[ \t\r\n]*(["'])[^"']*\1[ \t\r\n]+encoding[ \t\r\n]*=[ \t\r\n]*(["'])([^"']*)\2/d;

/** The XML declaration's encoding name and where it starts, read from an 8-bit document. */
function declaredEncoding(bytes: Buffer): { name: string; index: number } | null {
  const match = DECLARATION.exec(bytes.subarray(0, 512).toString('latin1'));
  return match?.indices?.[3] ? { name: match[3], index: match.indices[3][0] } : null;
}
