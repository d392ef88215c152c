import iconv from 'iconv-lite';
import { DOTNET_ENCODINGS } from './dotnet-encodings';

/**
 * Character encodings by the names .NET's Encoding.GetEncoding accepts, for reading requests.
 *
 * The names are .NET's own (dotnet-encodings.ts); iconv-lite decodes them: it knows the Windows,
 * ISO, DOS and Mac code pages, UTF-7 and UTF-32 besides what TextDecoder knows. A name .NET does not
 * know is "not supported": each caller answers that as .NET does (a fallback encoding, or the XML
 * reader's error).
 */
export interface Charset {
  /** iconv-lite's name of the code page (dotnet-encodings.ts), lower case. */
  readonly name: string;
  decode(bytes: Buffer): string;
  /** Two or four bytes a character (UTF-16, UTF-32): the XML declaration cannot switch it. */
  readonly wide: boolean;
}

/** .NET's UTF8Encoding as StreamReader uses it: an invalid sequence becomes U+FFFD. */
export const UTF8: Charset = { name: 'utf-8', decode: (b) => b.toString('utf8'), wide: false };

/** .NET's ASCIIEncoding: a byte above 0x7F is not ASCII and reads as '?'. */
export const ASCII: Charset = { name: 'us-ascii', decode: (b) => b.toString('latin1').replace(/[\x80-\xff]/g, '?'), wide: false };

const known = new Map<string, Charset>([
  ['utf-8', UTF8],
  ['ascii', ASCII],
]);

/** The encoding .NET's Encoding.GetEncoding(name) gives, or null where it throws (dotnet-encodings.ts). */
export function charsetNamed(name: string): Charset | null {
  const iconvName = DOTNET_ENCODINGS.get(name.trim().toLowerCase());
  if (iconvName === undefined) return null;
  let charset = known.get(iconvName);
  if (charset === undefined) {
    charset = { name: iconvName, decode: (b) => iconv.decode(b, iconvName, { stripBOM: false }), wide: /^utf-(16|32)/.test(iconvName) };
    known.set(iconvName, charset);
  }
  return charset;
}

/** A byte-order mark at the start, as .NET's StreamReader detects one: the encoding and its length. */
export function byteOrderMark(bytes: Buffer): { charset: Charset; length: number } | null {
  const [a, b, c, d] = bytes;
  if (a === 0xef && b === 0xbb && c === 0xbf) return { charset: UTF8, length: 3 };
  if (a === 0xff && b === 0xfe) {
    return c === 0 && d === 0 ? { charset: charsetNamed('utf-32le')!, length: 4 } : { charset: charsetNamed('utf-16le')!, length: 2 };
  }
  if (a === 0xfe && b === 0xff) return { charset: charsetNamed('utf-16be')!, length: 2 };
  if (a === 0 && b === 0 && c === 0xfe && d === 0xff) return { charset: charsetNamed('utf-32be')!, length: 4 };
  return null;
}

/** Decodes as .NET's StreamReader with detectEncodingFromByteOrderMarks: a BOM overrides `charset`. */
export function decodeWithBom(bytes: Buffer, charset: Charset): string {
  const bom = byteOrderMark(bytes);
  return bom === null ? charset.decode(bytes) : bom.charset.decode(bytes.subarray(bom.length));
}
