import iconv from 'iconv-lite';

/**
 * Character encodings by the names .NET's Encoding.GetEncoding accepts, for reading requests.
 *
 * iconv-lite decodes them: it knows the Windows, ISO, DOS and Mac code pages, UTF-7 and UTF-32
 * besides what TextDecoder knows, and its aliases follow the IANA names .NET uses. A name neither
 * knows is "not supported": each caller answers that as .NET does (a fallback encoding, or the XML
 * reader's error).
 */
export interface Charset {
  /** .NET's WebName, lower case. */
  readonly name: string;
  decode(bytes: Buffer): string;
  /** Two or four bytes a character (UTF-16, UTF-32): the XML declaration cannot switch it. */
  readonly wide: boolean;
}

/** .NET's UTF8Encoding as StreamReader uses it: an invalid sequence becomes U+FFFD. */
export const UTF8: Charset = { name: 'utf-8', decode: (b) => b.toString('utf8'), wide: false };

/** .NET's ASCIIEncoding: a byte above 0x7F is not ASCII and reads as '?'. */
export const ASCII: Charset = { name: 'us-ascii', decode: (b) => b.toString('latin1').replace(/[\x80-\xff]/g, '?'), wide: false };

/** iconv-lite names that are Node's own, not encodings .NET knows. */
const NOT_DOTNET = new Set(['base64', 'base64url', 'hex', 'binary', 'cesu8']);

/** .NET names whose meaning differs from iconv-lite's alias (UTF-16 and UTF-32 are little-endian there). */
const DOTNET_NAMES: Record<string, string> = {
  'utf-16': 'utf-16le',
  unicode: 'utf-16le',
  'ucs-2': 'utf-16le',
  unicodefffe: 'utf-16be',
  'utf-32': 'utf-32le',
  'us-ascii': 'ascii',
};

const known = new Map<string, Charset>([
  ['utf-8', UTF8],
  ['ascii', ASCII],
]);

function iconvCharset(name: string): Charset {
  return {
    name,
    decode: (b) => iconv.decode(b, name, { stripBOM: false }),
    wide: /^utf-?(16|32)/.test(name),
  };
}

/** The encoding .NET's Encoding.GetEncoding(name) gives, or null where it throws. */
export function charsetNamed(name: string): Charset | null {
  const lower = name.trim().toLowerCase();
  // iconv-lite ignores punctuation in names ("utf-16\"" is utf16 to it); .NET's names are tokens.
  if (!/^[a-z0-9][a-z0-9_.:-]*$/.test(lower)) return null;
  const canonical = DOTNET_NAMES[lower] ?? lower;
  const cached = known.get(canonical);
  if (cached !== undefined) return cached;
  if (NOT_DOTNET.has(canonical.replace(/[^0-9a-z]/g, '')) || !iconv.encodingExists(canonical)) return null;
  const charset = iconvCharset(canonical);
  // Only names that exist are kept, so the map is bounded by iconv-lite's table.
  known.set(canonical, charset);
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
