import { ParserMessages } from '../../basics/errors';

/**
 * What .NET's XmlTextReader (XmlTextReaderImpl, as ASMX sets it up: Normalization on, DTDs
 * prohibited) refuses that sax lets through: characters XML 1.0 does not allow, raw or as a
 * character reference; the XML declaration's syntax; and what it reads after the root element. Each
 * answers with the reader's message and the index it reports (see lineAndColumn).
 */

export interface XmlError {
  readonly message: string;
  readonly index: number;
}

/**
 * A UTF-16 unit outside XML 1.0's Char production: C0 controls other than tab, LF and CR, U+FFFE,
 * U+FFFF, and surrogates not in a pair.
 */
const INVALID =
  /[\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|[\uDC00-\uDFFF](?<![\uD800-\uDBFF][\uDC00-\uDFFF])/g;

/** The index of the first character XML does not allow at or after `from`, or -1. */
export function firstInvalid(source: string, from = 0): number {
  INVALID.lastIndex = from;
  return INVALID.exec(source)?.index ?? -1;
}

/** Any surrogate, U+FFFE, U+FFFF or a C0 control but tab, LF and CR: a quicker first test than INVALID's. */
const SUSPECT = /[\x00-\x08\x0B\x0C\x0E-\x1F\uD800-\uDFFF\uFFFE\uFFFF]/;

/** True when the whole text is free of characters XML does not allow (the quick reader's test). */
export const allValid = (source: string): boolean => !SUSPECT.test(source) || firstInvalid(source) === -1;

/**
 * A character as XmlException names it (XmlException.BuildCharExceptionArgs): U+0000 as '.', a high
 * surrogate with the unit after it, and its code in hexadecimal, at least two digits.
 */
export function charArgs(c: number, next: number): [string, string] {
  if (c >= 0xd800 && c <= 0xdbff && next !== 0) {
    const combined = ((next - 0xdc00) | ((c - 0xd800) << 10)) + 0x10000;
    return [String.fromCharCode(c, next), `0x${combined.toString(16).toUpperCase().padStart(2, '0')}`];
  }
  return [c === 0 ? '.' : String.fromCharCode(c), `0x${c.toString(16).toUpperCase().padStart(2, '0')}`];
}

const argsAt = (source: string, index: number) =>
  charArgs(source.charCodeAt(index), index + 1 < source.length ? source.charCodeAt(index + 1) : 0);

/**
 * Bytes the XML reader's own UTF-8 decoder refuses (it throws on them, where a StreamReader reads
 * U+FFFD) are handed to the scanners as one lone low surrogate, U+DC80 to U+DCFF (the byte's low
 * bits), which valid UTF-8 never decodes to: a character XML refuses where it stands, reported with
 * the decoder's message rather than the character's. (A UTF-16 document's own lone surrogate in that
 * range is reported so too: the only place the two readings part.)
 */
export const undecodableByte = (byte: number): string => String.fromCharCode(0xdc00 | byte);

function isUndecodable(source: string, index: number): boolean {
  const c = source.charCodeAt(index);
  return c >= 0xdc80 && c <= 0xdcff && !(index > 0 && source.charCodeAt(index - 1) >= 0xd800 && source.charCodeAt(index - 1) <= 0xdbff);
}

/** The decoder's refusal at `index`, if the character there stands for bytes it could not read. */
export const undecodableAt = (source: string, index: number): XmlError | null =>
  isUndecodable(source, index) ? { message: ParserMessages.invalidInEncoding, index } : null;

export const invalidCharAt = (source: string, index: number): XmlError =>
  undecodableAt(source, index) ?? { message: ParserMessages.invalidCharacter(...argsAt(source, index)), index };

/** A character reference `&#...;` at `index` naming a character XML does not allow, with the index .NET reports (its digits). */
export function badReference(source: string, index: number): XmlError | null {
  const m = /^&#(x[0-9a-fA-F]+|[0-9]+);/.exec(source.slice(index, index + 16));
  if (m === null) return null;
  const value = m[1][0] === 'x' ? parseInt(m[1].slice(1), 16) : parseInt(m[1], 10);
  const digits = index + (m[1][0] === 'x' ? 3 : 2);
  if (value > 0xffff) {
    if (value <= 0x10ffff) return null;
    // SplitSurrogateChar of a value past U+10FFFF: the "high" unit is not a high surrogate.
    const v = value - 0x10000;
    return { message: ParserMessages.invalidCharacter(...charArgs(0xd800 + ((v >> 10) & 0xffff), 0xdc00 + (v & 0x3ff))), index: digits };
  }
  if (isChar(value)) return null;
  return { message: ParserMessages.invalidCharacter(...charArgs(value, 0)), index: digits };
}

const isChar = (c: number) => c === 0x9 || c === 0xa || c === 0xd || (c >= 0x20 && c <= 0xd7ff) || (c >= 0xe000 && c <= 0xfffd);
const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d;
/** XmlCharType's fAttrValue: Char without tab, CR, LF, <, >, &, quotes. */
const isAttrValueChar = (c: number) =>
  isChar(c) && c !== 0x9 && c !== 0xa && c !== 0xd && c !== 0x3c && c !== 0x3e && c !== 0x26 && c !== 0x22 && c !== 0x27;
const isNameStart = (c: number) =>
  // biome-ignore lint/suspicious/noMisleadingCharacterClass: XML's name characters, by code point ranges (joiners among them)
  /[A-Za-z_:\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u02FF\u0370-\u037D\u037F-\u1FFF\u200C\u200D\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD]/.test(
    String.fromCharCode(c),
  );
// biome-ignore lint/suspicious/noMisleadingCharacterClass: XML's name characters, by code point ranges (combining marks among them)
const isNameChar = (c: number) => isNameStart(c) || /[-.0-9\u00B7\u0300-\u036F\u203F-\u2040]/.test(String.fromCharCode(c));

function nameEnd(source: string, i: number): number {
  let j = i;
  while (j < source.length && isNameChar(source.charCodeAt(j))) j++;
  return j;
}

/** The token XmlTextReaderImpl.ParseUnexpectedToken names: a run of name characters, or one character. */
function tokenAt(source: string, i: number): string {
  const end = nameEnd(source, i);
  return end > i ? source.slice(i, end) : source[i];
}

/**
 * The XML declaration at the start of `source` (`<?xml` then a character that cannot continue a
 * name), as XmlTextReaderImpl.ParseXmlDeclaration reads it: `version="1.0"` first, then optionally
 * `encoding`, then optionally `standalone` (yes or no), each after white space, with white space
 * allowed around `=`. Null when there is no declaration or it is well-formed.
 */
export function declarationError(source: string): XmlError | null {
  if (!source.startsWith('<?xml') || source.length < 6 || isNameChar(source.charCodeAt(5))) return null;
  const n = source.length;
  let i = 5;
  let state = 0; // 0: before version, 1: after version, 2: after encoding, 3: after standalone
  const err = (message: string, index: number): XmlError => ({ message, index });
  for (;;) {
    const before = i;
    while (i < n && isSpace(source.charCodeAt(i))) i++;
    if (i >= n) return err(ParserMessages.unexpectedEof, i);
    if (source[i] === '?') {
      if (source[i + 1] === '>') return state === 0 ? err(ParserMessages.invalidDeclaration, i) : null;
      if (i + 1 >= n) return err(ParserMessages.unexpectedEof, i + 1);
      return err(ParserMessages.unexpectedToken('?', "'>'"), i);
    }
    if (i === before && state !== 0) return err(ParserMessages.unexpectedToken(tokenAt(source, i), '?>'), i);
    const c = source.charCodeAt(i);
    if (!isNameStart(c)) return err(ParserMessages.nameStart(...argsAt(source, i)), i);
    const end = nameEnd(source, i);
    const name = source.slice(i, end);
    let attribute: 'version' | 'encoding' | 'standalone';
    if (name === 'version' && state === 0) attribute = name;
    else if (name === 'encoding' && state === 1) attribute = name;
    else if (name === 'standalone' && (state === 1 || state === 2)) attribute = name;
    else return err(ParserMessages.invalidDeclaration, i);
    i = end;
    while (i < n && isSpace(source.charCodeAt(i))) i++;
    if (source[i] !== '=')
      return i >= n ? err(ParserMessages.unexpectedEof, i) : err(ParserMessages.unexpectedToken(tokenAt(source, i), '='), i);
    i++;
    while (i < n && isSpace(source.charCodeAt(i))) i++;
    const quote = source[i];
    if (quote !== '"' && quote !== "'")
      return i >= n ? err(ParserMessages.unexpectedEof, i) : err(ParserMessages.unexpectedTokens(tokenAt(source, i), '"', "'"), i);
    const start = ++i;
    while (i < n && isAttrValueChar(source.charCodeAt(i))) i++;
    if (i >= n) return err(ParserMessages.unclosedLiteral, i);
    if (source[i] !== quote) return err(ParserMessages.invalidDeclaration, start);
    const value = source.slice(start, i);
    if (attribute === 'version') {
      if (value !== '1.0') return err(ParserMessages.invalidVersion(value), start);
      state = 1;
    } else if (attribute === 'encoding') state = 2;
    else {
      if (value !== 'yes' && value !== 'no') return err(ParserMessages.invalidDeclaration, start - 1);
      state = 3;
    }
    i++;
  }
}

/**
 * A processing instruction's target, starting at `index` (after `<?`), as ParsePI reads it: a name,
 * not `xml` in any case, then white space or `?>`. Null when it is well-formed.
 */
export function piTargetError(source: string, index: number): XmlError | null {
  if (index >= source.length) return { message: ParserMessages.unexpectedEof, index };
  if (!isNameStart(source.charCodeAt(index))) return { message: ParserMessages.nameStart(...argsAt(source, index)), index };
  const end = nameEnd(source, index);
  const target = source.slice(index, end);
  if (target.toLowerCase() === 'xml')
    return { message: target === 'xml' ? ParserMessages.declarationNotFirst : ParserMessages.invalidPIName(target), index };
  if (end >= source.length) return { message: ParserMessages.unexpectedEof, index: end };
  if (!isSpace(source.charCodeAt(end)) && !source.startsWith('?>', end))
    return { message: ParserMessages.nameChar(...argsAt(source, end)), index: end };
  return null;
}

/**
 * What ASMX reads after the root element ends: SoapServerProtocol.ReadParameters reads the
 * Envelope's end tag and then one node more (XmlReader.Read), and nothing after it. That node is
 * white space (taken whole when a `<` or the end follows it), a comment or a processing instruction
 * (read whole), or an error (text, a second element, CDATA, a DTD, an end tag). The message matters
 * to no one (a failure there is always a bare 400), only whether there is one.
 */
export function afterRootError(source: string, end: number): XmlError | null {
  // A NUL just after it is the end of the document to XmlTextReader (v1Compat), whatever follows.
  if (source.charCodeAt(end) === 0) return null;
  const n = source.length;
  let i = end;
  while (i < n && isSpace(source.charCodeAt(i))) i++;
  if (i === n || (i > end && source[i] === '<')) return null;
  const refused = { message: ParserMessages.invalidRootData, index: i };
  if (source[i] !== '<') return isChar(source.charCodeAt(i)) ? refused : invalidCharAt(source, i);
  if (source.startsWith('<!--', i)) {
    const close = source.indexOf('--', i + 4);
    if (close === -1 || source[close + 2] !== '>') return refused;
    const bad = firstInvalid(source.slice(0, close), i + 4);
    return bad === -1 ? null : invalidCharAt(source, bad);
  }
  if (source[i + 1] === '?') {
    const target = piTargetError(source, i + 2);
    if (target !== null) return target;
    const nameTo = nameEnd(source, i + 2);
    const close = source.indexOf('?>', nameTo);
    if (close === -1) return refused;
    const bad = firstInvalid(source.slice(0, close), nameTo);
    return bad === -1 ? null : invalidCharAt(source, bad);
  }
  return { message: ParserMessages.multipleRoots, index: i };
}
