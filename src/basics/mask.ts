import { urlDecode } from './url-decode';

/**
 * The one masking rule for text that leaves the request path: log lines (basics/log.ts, whoever
 * writes them), the outbox's stored last_error (store/outbox.ts) and the shadow differences log and
 * console (shadow/report.ts). AuthCode's code goes wherever a field names it, by the name as ASP.NET
 * decodes it; a phone is masked in every spelling the intake reads (sms/validation.ts, libphonenumber-js):
 * with or without `+` or `00`, national with its trunk 0, split by spaces, dashes, dots, slashes or
 * brackets, in any script's digits, percent-encoded in a URL. docs/logs.md, "Masking", says why.
 * Every scan here is linear in the text: the text may be a hostile request.
 */

/** The form maskPhone gives (also '****' and '(none)'): nothing left to hide in it. */
const MASKED = /^(?:\+?\d{0,6}\*{4}\d{0,3}|\(none\))$/;

/** What stands in for a code's value. */
export const REMOVED = '[removed]';

const DIGIT = /\p{Nd}/u;
const isDigit = (c: string) => DIGIT.test(c);

/**
 * A phone for logs, `+96477****567`: country code and operator prefix, four stars whatever the
 * length, the last three digits; enough for an operator to tell numbers apart without reading them.
 * A number written without its country (`0770 123 4567`) keeps only its trunk and operator digits
 * (`077****567`), and at least four digits are always hidden. Only a value exactly of that form is
 * taken as masked already (fields are masked where logged and again by the logger): stars anywhere
 * else hide nothing.
 */
export function maskPhone(phone: unknown): string {
  if (phone === null || phone === undefined) return '(none)';
  // Longer than any phone number: what is past it is not one, and is not read.
  const text = String(phone).slice(0, 64);
  if (MASKED.test(text)) return text;
  let digits = [...text].filter(isDigit).join('');
  const first = text.search(/[\p{Nd}+＋]/u);
  let plus = first !== -1 && (text[first] === '+' || text[first] === '＋');
  // 00 is the international prefix the intake reads as a `+`.
  if (!plus && digits.startsWith('00') && digits.length >= 12) [plus, digits] = [true, digits.slice(2)];
  if (digits.length + (plus ? 1 : 0) < 10) return '****';
  // With its country code (a `+`, or too long for a national number): the first six characters.
  const international = plus || (digits.length >= 12 && !digits.startsWith('0'));
  const shown = Math.min(international ? 6 - (plus ? 1 : 0) : 3, digits.length - 7);
  return `${plus ? '+' : ''}${digits.slice(0, shown)}****${digits.slice(-3)}`;
}

/**
 * Between the digits of one number: the punctuation libphonenumber-js skips (spaces, dashes, dots,
 * slashes, brackets, tildes, in their ASCII and full-width forms), a form's `+` for a space, and
 * the same percent-encoded in a URL or a form.
 */
const SEPARATOR = String.raw`(?:[ \u00A0\u00AD\u200B\u2060\u3000\-\u2010-\u2015\u2212\u30FC\uFF0D/\uFF0F.\uFF0E()\uFF08\uFF09[\]\uFF3B\uFF3D~\u2053\u223C\uFF5E+]|%(?:2[0BbDdEeFf89]|7[Ee]))`;
/** A digit of any script (the intake reads Arabic-Indic and full-width ones), or a percent-encoded ASCII one. */
const DIGIT_OR_ESCAPE = String.raw`(?:\p{Nd}|%3[0-9])`;
/**
 * A run of seven digits or more, with at most three separators between two of them (`0770 - 123`),
 * and the `+` (or `%2B`) before it. Fewer digits are an id, a count or a port, never a phone the
 * intake takes for SMS. Separators and digits are disjoint, so a run is read in one pass, and a
 * shorter one is given up within seven digits; a longer run than any number (30 digits) is read as
 * several, each masked (the regular expression's stack stays bounded whatever the text).
 */
const RUN = new RegExp(`(?:[+\uFF0B]|%2[Bb])?${DIGIT_OR_ESCAPE}(?:${SEPARATOR}{0,3}${DIGIT_OR_ESCAPE}){6,29}`, 'gu');

/** Dotted quads (an IPv4 address) and dates (2026-11-25, 2026/11/25 16): digits that are not a phone. */
const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;
const DATE = /^(?:19|20)\d\d([-/.])(?:0[1-9]|1[0-2])\1(?:0[1-9]|[12]\d|3[01])(?:[ T]\d\d)?$/;

/** How far around a run its word is read, each way: enough for a UUID or a SHA-256 in hex. */
const WORD_REACH = 80;
const WORD_CHAR = /[0-9A-Za-z-]/;
const HEX_ID = /^(?=[0-9a-f-]*[a-f])(?:-?[0-9a-f]){16,}-?$/i;

/** A UUID with a letter among its hex digits (what HEX_ID says of it, read without a regular expression: every request line has one). */
function isUuid(text: string): boolean {
  let letter = false;
  for (let i = 0; i < 36; i++) {
    const c = text.charCodeAt(i) | 0x20;
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 0x2d) return false;
    } else if (c >= 0x61 && c <= 0x66) letter = true;
    else if (c < 0x30 || c > 0x39) return false;
  }
  return letter;
}

/**
 * Whether the run [start, end) is part of a hexadecimal id (a UUID, a hash, a trace id): sixteen
 * hex digits or more, a letter among them, dashes allowed. Such runs are not a number someone
 * typed; any other word (`AuthCode07701234567`, `x07701234567`) is read for a phone as the intake reads it.
 */
function inHexId(text: string, start: number, end: number): boolean {
  let from = start;
  let to = end;
  while (from > 0 && start - from < WORD_REACH && WORD_CHAR.test(text[from - 1]!)) from -= 1;
  while (to < text.length && to - end < WORD_REACH && WORD_CHAR.test(text[to]!)) to += 1;
  if (from === start && to === end) return false;
  return HEX_ID.test(text.slice(from, to));
}

/**
 * Every run of seven or more digits that could be a phone, masked as maskPhone masks one, wherever
 * it stands (a word around it included: the intake reads `x07701234567`). Kept: digits inside a
 * hexadecimal id, an IPv4 address, a date.
 */
export function maskPhones(text: string): string {
  // Fewer than seven characters that could be digits (ASCII, any other script's, escaped): no run.
  let maybe = 0;
  for (let i = 0; i < text.length && maybe < 7; i++) {
    const c = text.charCodeAt(i);
    if ((c >= 0x30 && c <= 0x39) || c === 0x25 || c > 0x7f) maybe += 1;
  }
  if (maybe < 7) return text;
  // A request id as the service makes them (on every request line): a hex id, kept; said at once.
  if (text.length === 36 && isUuid(text)) return text;
  return text.replace(RUN, (run: string, start: number) => {
    if (inHexId(text, start, start + run.length)) return run;
    // Only ASCII escapes can be in a run (digits, separators, `+`): each is its character.
    const plain = run.includes('%') ? run.replace(/%([0-9A-Fa-f]{2})/g, (_e, h: string) => String.fromCharCode(parseInt(h, 16))) : run;
    return IPV4.test(plain) || DATE.test(plain) ? run : maskPhone(plain);
  });
}

/**
 * `name=value` pairs of a query string or form, each name read as ASP.NET reads it (HttpUtility.
 * UrlDecode, matched without regard to case): `%63ode=`, `CODE=`, `c%6fde=` all name the code.
 */
const PAIR = /(^|[?&\s"'])([^=&?#\s"'<>]{1,96})=([^&#\s"'<>]*)/g;

const JSON_CODE = /("code"\s*:\s*)(?:"[^"]*"|\d+)/gi;

function maskPairs(text: string): string {
  if (!text.includes('=')) return text;
  return text.replace(PAIR, (whole, before: string, name: string, value: string) => {
    const decoded = (name.includes('%') || name.includes('+') ? urlDecode(name) : name).toLowerCase();
    if (decoded === 'code') return `${before}${name}=${REMOVED}`;
    if (decoded === 'phone') return `${before}${name}=${encodeURIComponent(maskPhone(urlDecode(value)))}`;
    return whole;
  });
}

/**
 * Replaces the content of each element with this local name (any prefix, any case), up to its end
 * tag or the end of the text. XML names have no escapes: the name as written is the name read.
 */
function maskElements(text: string, local: string, replace: (content: string) => string): string {
  const open = new RegExp(`<(?:[\\w.-]+:)?${local}(?:\\s[^<>]*)?>`, 'gi');
  const close = new RegExp(`</(?:[\\w.-]+:)?${local}\\s*>`, 'gi');
  let out = '';
  let at = 0;
  for (let m = open.exec(text); m !== null; m = open.exec(text)) {
    if (m[0].endsWith('/>')) continue;
    const start = m.index + m[0].length;
    close.lastIndex = start;
    const end = close.exec(text);
    const stop = end === null ? text.length : end.index;
    out += text.slice(at, start) + replace(text.slice(start, stop));
    at = stop;
    if (end === null) break;
    open.lastIndex = stop;
  }
  return out + text.slice(at);
}

/** A character some rule below reads: a digit (any script's is non-ASCII), `%`, `<`, `"`, `=`. */
const MAYBE = /[0-9%<"=\u0080-\uffff]/;

/**
 * Free text masked: codes out of XML elements (`<code>`, `<x:code>`) and of query or form pairs,
 * phones masked there and anywhere else. Masking masked text changes nothing.
 */
export function maskText(text: string): string {
  // Most log values (names, methods, addresses' words) hold nothing any rule reads: said at once.
  if (!MAYBE.test(text)) return text;
  let t = text;
  if (t.includes('<'))
    t = maskElements(
      maskElements(t, 'code', () => REMOVED),
      'phone',
      maskPhone,
    );
  // A code as a JSON member (a provider's echo, a client's JSON body): `"code": "4821"`.
  if (t.includes('"')) t = t.replace(JSON_CODE, `$1"${REMOVED}"`);
  return maskPhones(maskPairs(t));
}
