import { ALNOOR, ARABIC_SCHOOL, BIG, RAFIDAIN } from '../legacy/corpus-kit';
import { dangerousAt } from '../../src/basics/request-validation';
import type { Draws } from './draws';

/**
 * Parameter values of every length and script: the data set's own (so that answers carry rows),
 * empty, and text drawn from the alphabets a client may send, ASCII to emoji, control characters,
 * direction marks and request validation's dangerous sequences; for the one char parameter
 * (show_active), numbers at the edges of .NET's UInt16 and Int32 on SOAP, one or two characters on
 * HTTP. Each value says which of the rules its text reaches (its tags).
 */

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => String.fromCodePoint(from + i));

/** Alphabets, simplest first. */
const SCRIPTS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['ascii', [...range(0x61, 0x7a), ...range(0x30, 0x39), '-', '.']],
  ['ascii-specials', [...range(0x20, 0x7e)]],
  ['latin1', range(0xa0, 0xff)],
  ['arabic', [...range(0x621, 0x64a), ...range(0x660, 0x669), ' ']],
  ['emoji', ['😀', '👍', '🏫', '𝒜', '🇮🇶']],
  ['whitespace', [' ', '\t', '\n', '\r\n', '\u00a0', '\u2028', '\u3000']],
  ['bidi', ['\u200e', '\u200f', '\u202a', '\u202b', '\u202c', '\u202d', '\u202e']],
  ['controls', [...range(0x1, 0x8), '\u000b', '\u000c', ...range(0xe, 0x1f), '\u007f', '\u0085', '\u009f']],
  ['dangerous', ['<b', '&#', '<!', '</', '<?', '&#x41;', '<script>', '<', '&', '&amp;', '>', '"', "'", '%', '+', '=', '#', ';', '＜']],
  ['fullwidth', [...range(0xff10, 0xff19), ...range(0xff21, 0xff3a)]],
];

/** Lengths, in pieces drawn: none, one, a few, a line, a paragraph, pages. */
const LENGTHS: ReadonlyArray<readonly [number, number]> = [
  [1, 1],
  [2, 8],
  [9, 40],
  [41, 300],
  [301, 3000],
];

export interface Value {
  text: string;
  tags: string[];
}

/** .NET's request validation (CrossSiteScriptingValidation.IsDangerousString, NULs removed first). */
export const netDangerous = (s: string) => dangerousAt(s.replaceAll('\0', '')) !== -1;
/** Mono's (its HttpRequest.IsInvalidString): `<` or `＜` before `!`, a control character or an ASCII letter; `&#`. */
export const monoDangerous = (s: string) => /[<\uff1c][!A-Za-z\u0000-\u001f]|&#/.test(s);

/** Whether Mono's request validation refuses other values than .NET's, or writes its message otherwise (＜ and ＞ as references). */
export const validationDiffers = (s: string) => monoDangerous(s) !== netDangerous(s) || (netDangerous(s) && /[\uff1c\uff1e]/.test(s));

/** Tags of what a value's text holds, for the rules keyed by them (rules.ts). */
export function textTags(text: string): string[] {
  const tags: string[] = [];
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/.test(text)) tags.push('value:control');
  if (/[\u200e\u200f\u202a-\u202e]/.test(text)) tags.push('value:bidi');
  if (/[\u00a0-\u00ff]/.test(text)) tags.push('value:latin1');
  return tags;
}

/** Text of a length class and a script (a second script mixed in sometimes). */
export function text(d: Draws, maxLengthClass = LENGTHS.length - 1): string {
  const [lo, hi] = LENGTHS[d.int(maxLengthClass + 1)];
  const n = lo + d.int(hi - lo + 1);
  const [, first] = d.pick(SCRIPTS);
  const second = d.chance(30) ? d.pick(SCRIPTS)[1] : first;
  let out = '';
  for (let i = 0; i < n; i++) out += d.pick(d.chance(20) ? second : first);
  return out;
}

/** The data set's values of each parameter (the first is a row that is there). */
const KNOWN: Record<string, readonly string[]> = {
  id: ['dev-1001', 'dev-1002', 'dev-1004', 'dev-3001', 'dev-empty', 'no-such-device'],
  school_base_url: [ALNOOR, RAFIDAIN, ARABIC_SCHOOL, BIG, 'http://nowhere.example'],
  show_active: ['1', '0'],
  code: ['1234', '0000', '١٢٣٤'],
  phone: ['07701234567', '+9647701234567', '0770 123 4567'],
  StudnetID: ['1001', '0', '-1', '2147483647', '2147483648'],
  SubjectID: ['7', '', '99999999999'],
};

/** show_active on SOAP travels as the UTF-16 code of its char (xsd unsignedShort): the edges of what .NET reads. */
const CHAR_CODES = [
  '49',
  '48',
  '0',
  '65535',
  '65536',
  '-1',
  '2147483647',
  '2147483648',
  '-2147483649',
  '+49',
  ' 49 ',
  '049',
  '4.9e1',
  '0x31',
  '1e3',
  '٤٩',
  '４９',
  '49.0',
  '',
];
/** show_active on HTTP is the char itself (Convert.ToChar: exactly one UTF-16 unit). */
const CHARS = ['1', '0', 'ن', '😀', 'ab', ' ', '%', '\u0001', '\u00e9', '<', '&', '\u200f'];

/** A value for a parameter: the data set's, empty, a twist of the data set's, or drawn text. */
export function value(d: Draws, param: string, soap: boolean): Value {
  const known = KNOWN[param] ?? ['x'];
  const kind = d.weighted([
    [40, 'known'],
    [8, 'empty'],
    [12, 'twisted'],
    [param === 'show_active' ? 25 : 5, 'char'],
    [35, 'text'],
  ] as const);
  let t: string;
  if (kind === 'known') t = d.pick(known);
  else if (kind === 'empty') t = '';
  else if (kind === 'char') t = d.pick(param === 'show_active' && soap ? CHAR_CODES : CHARS);
  else if (kind === 'twisted') {
    const base = d.pick(known);
    const piece = text(d, 1);
    t = d.pick([
      () => ` ${base} `,
      () => base.toUpperCase(),
      () => base + piece,
      () => piece + base,
      () => base.slice(0, Math.max(0, base.length - 1)),
    ])();
  } else t = text(d);
  return { text: t, tags: textTags(t) };
}
