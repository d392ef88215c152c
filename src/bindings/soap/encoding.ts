import { ASCII, byteOrderMark, type Charset, charsetNamed, decodeWithBom } from '../../basics/charset';
import { isUtf8 } from 'node:buffer';
import { ParserMessages } from '../../basics/errors';
import { lineAndColumn } from './scan';
import { undecodableByte } from './xml-rules';

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
  if (detected?.wide) return readWide(bytes, detected);

  const declared = declaredEncoding(bytes);
  if (declared === null) return { ok: true, text: readerUtf8(bytes) };
  const lower = declared.name.toLowerCase();
  // A one-byte document cannot declare itself two-byte; `ucs-4` is ignored by the reader.
  if (WIDE_NAMES.has(lower)) return { ok: false, reasons: [ParserMessages.noByteOrderMark] };
  if (lower === 'ucs-4' || lower === 'utf-8') return { ok: true, text: readerUtf8(bytes) };
  const charset = charsetNamed(declared.name);
  if (charset === null) {
    const { line, column } = lineAndColumn(bytes.toString('latin1'), declared.index);
    return { ok: false, reasons: ParserMessages.unsupportedEncoding(declared.name, line, column) };
  }
  return { ok: true, text: charset.decode(bytes) };
}

/**
 * A UTF-16 or UTF-32 document (by its mark, or by how its `<` is written) is read in that encoding up
 * to the end of its XML declaration. A declaration naming another encoding switches the reader to it
 * there (XmlTextReaderImpl.SwitchEncoding: the bytes after the declaration's, counted in the first
 * encoding, are read in the second), which for a document written in UTF-16 reads every other
 * character as a NUL the reader refuses. The UTF-16 names and `ucs-4` keep the encoding it has.
 */
function readWide(bytes: Buffer, wide: Charset): DecodedEnvelope {
  const text = wide.decode(bytes);
  const declared = DECLARATION.exec(text.slice(0, 512));
  const end = declared === null ? -1 : text.indexOf('?>', declared[0].length);
  if (declared === null || end === -1) return { ok: true, text };
  const lower = declared[3].toLowerCase();
  if (WIDE_NAMES.has(lower) || lower === 'ucs-4') return { ok: true, text };
  const charset = charsetNamed(declared[3]);
  if (charset === null) {
    const { line, column } = lineAndColumn(text, declared.indices![3][0]);
    return { ok: false, reasons: ParserMessages.unsupportedEncoding(declared[3], line, column) };
  }
  if (charset.name === wide.name) return { ok: true, text };
  const declarationEnd = end + 2;
  const rest = bytes.subarray(declarationEnd * (wide.name.startsWith('utf-32') ? 4 : 2));
  return { ok: true, text: text.slice(0, declarationEnd) + (lower === 'utf-8' ? readerUtf8(rest) : charset.decode(rest)) };
}

/**
 * UTF-8 as the XML reader decodes it itself (new UTF8Encoding(true, true), with or without a byte
 * order mark): bytes that are not UTF-8 are refused where the reader reaches them (xml-rules.ts
 * marks the first), where a StreamReader would read U+FFFD; a sequence cut short by the end of the
 * body is no character and no error, as the decoder holds it back.
 */
function readerUtf8(bytes: Buffer): string {
  if (isUtf8(bytes)) return bytes.toString('utf8');
  const { invalid, end } = utf8Extent(bytes);
  if (invalid === -1) return bytes.toString('utf8', 0, end);
  return bytes.toString('utf8', 0, invalid) + undecodableByte(bytes[invalid]) + bytes.toString('utf8', invalid + 1);
}

/** Where UTF-8 first goes wrong (-1: nowhere), and where its last whole character ends. */
function utf8Extent(bytes: Buffer): { invalid: number; end: number } {
  const n = bytes.length;
  let i = 0;
  while (i < n) {
    const lead = bytes[i];
    if (lead < 0x80) {
      i++;
      continue;
    }
    const more = lead >= 0xc2 && lead <= 0xdf ? 1 : lead >= 0xe0 && lead <= 0xef ? 2 : lead >= 0xf0 && lead <= 0xf4 ? 3 : 0;
    if (more === 0) return { invalid: i, end: i };
    // The second byte's range excludes overlong forms, surrogates and code points past U+10FFFF.
    const low = lead === 0xe0 ? 0xa0 : lead === 0xf0 ? 0x90 : 0x80;
    const high = lead === 0xed ? 0x9f : lead === 0xf4 ? 0x8f : 0xbf;
    for (let k = 1; k <= more; k++) {
      if (i + k >= n) return { invalid: -1, end: i };
      const b = bytes[i + k];
      if (k === 1 ? b < low || b > high : b < 0x80 || b > 0xbf) return { invalid: i, end: i };
    }
    i += more + 1;
  }
  return { invalid: -1, end: n };
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
