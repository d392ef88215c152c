import iconv from 'iconv-lite';
import { urlDecode } from '../../src/basics/url-decode';
import type { Draws } from './draws';
import type { Param } from './shapes';
import { monoDangerous, validationDiffers } from './values';

/**
 * HTTP GET and POST as clients write them: a query string or form from the parameters (each value
 * %-escaped as encodeURIComponent does, with `+` for spaces, in lower-case hex, as %uXXXX, in
 * another charset's bytes, or raw), segments without `=`, empty and trailing `&`; the form's
 * Content-Type (charset, case, white space, another media type, none); and the methods clients use
 * and some they should not.
 */

/** A text's bytes as a string of byte-valued characters (what a request line or header is written as). */
export const latin1Bytes = (s: string, encoding = 'utf-8') => iconv.encode(s, encoding).toString('latin1');

const hex = (b: number) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`;

/** One name or value %-escaped as drawn; `raw` leaves it as it is, bytes in `charset`. */
function escaped(d: Draws, s: string, inQuery: boolean, tags: string[]): string {
  const at = d.position;
  const how = d.weighted([
    [75, 'component'],
    [6, 'plus'],
    [5, 'lower-hex'],
    [3, 'percent-u'],
    [5, 'other-charset'],
    [6, 'raw'],
  ] as const);
  const component = encodeURIComponent(s);
  if (how === 'plus') return component.replace(/%20/g, '+');
  if (how === 'lower-hex') return component.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
  if (how === 'percent-u' && inQuery && /[^\w.-]/.test(s)) tags.push(`query:percent-u@${at}`);
  if (how === 'percent-u')
    return [...s]
      .map((ch) => (/[\w.-]/.test(ch) ? ch : [...ch].map((u) => `%u${u.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')))
      .join('');
  if (how === 'other-charset') {
    const charset = d.pick(['windows-1256', 'iso-8859-1']);
    return [...iconv.encode(s, charset)]
      .map((b) => (/[\w.-]/.test(String.fromCharCode(b)) && b < 0x80 ? String.fromCharCode(b) : hex(b)))
      .join('');
  }
  // Raw: in a query string only what a request line can carry (no space, control, `#` or `&`); in a form, anything but `&` and `=`.
  const unsafe = inQuery ? /[\s\u0000-\u001f\u007f#&=%+]/ : /[&=%+]/;
  const raw = [...s].map((ch) => (unsafe.test(ch) ? encodeURIComponent(ch) : ch)).join('');
  if (inQuery && /[^\u0000-\u007f]/.test(raw)) tags.push(`target:raw-non-ascii@${at}`);
  if (!inQuery && /[\u0080-\u00ff]/.test(raw)) tags.push(`form:raw-latin1@${at}`);
  return raw;
}

export interface Written {
  /** The query string or form, as a string of characters (non-ASCII left to the caller's encoding). */
  text: string;
  tags: string[];
}

/** A query string or a form body from the parameters. */
export function pairs(d: Draws, params: Param[], inQuery: boolean): Written {
  const tags: string[] = [];
  const segments: string[] = [];
  for (const p of params) {
    const at = d.position;
    if (d.chance(3)) {
      tags.push(`${inQuery ? 'query' : 'form'}:no-equals@${at}`);
      segments.push(escaped(d, p.value.text || p.name, inQuery, tags));
      continue;
    }
    const name = escaped(d, p.name, inQuery, tags);
    const value = escaped(d, p.value.text, inQuery, tags);
    segments.push(`${name}=${value}`);
    // request validation reads what the server decodes; .NET skips `__` names (ASP.NET's own fields), Mono does not
    const read = urlDecode(value);
    if (validationDiffers(read) || (urlDecode(name).startsWith('__') && monoDangerous(read))) tags.push(`value:validation-differs@${p.at}`);
  }
  if (d.chance(3)) segments.splice(d.int(segments.length + 1), 0, '');
  let text = segments.join('&');
  if (d.chance(3)) text += '&';
  return { text, tags };
}

/** The form's Content-Type: the media type ASMX reads, its charset and spelling, or another type. */
export function formType(d: Draws, tags: string[]): { type: string | null; charset: string } {
  const typeAt = d.position;
  const type = d.weighted([
    [88, 'application/x-www-form-urlencoded'],
    [4, ''],
    [2, 'text/plain'],
    [2, 'text/xml'],
    [2, 'application/json'],
    [2, 'multipart/form-data; boundary=b'],
  ] as const);
  if (type === '') return { type: null, charset: 'utf-8' };
  if (type === 'application/json') tags.push(`content-type:json@${typeAt}`);
  const charset = d.weighted([
    [50, ''],
    [25, 'utf-8'],
    [6, 'iso-8859-1'],
    [7, 'windows-1256'],
    [4, 'x-no-such-charset'],
    [4, 'UTF-8'],
    [4, '"utf-8"'],
  ] as const);
  const cased = d.chance(10) ? type.toUpperCase() : type;
  const at = d.position;
  const sep = d.weighted([
    [85, '; '],
    [8, ';'],
    [7, ' ; '],
  ] as const);
  const extra = d.chance(3) ? `${sep}x=y` : '';
  if ((charset !== '' || extra !== '') && sep.startsWith(' ')) tags.push(`content-type:space-before-semicolon@${at}`);
  const known = ['iso-8859-1', 'windows-1256'].includes(charset) ? charset : 'utf-8';
  return { type: `${cased}${charset === '' ? '' : `${sep}charset=${charset}`}${extra}`, charset: known };
}

/** Methods, simplest (the binding's own) first; an `unknown` one is one HTTP parsers do not list. */
export function method(d: Draws, own: 'GET' | 'POST', tags: string[]): string {
  const at = d.position;
  const m = d.weighted([
    [92, own],
    [2, own === 'GET' ? 'POST' : 'GET'],
    [2, 'HEAD'],
    [1, 'PUT'],
    [1, 'DELETE'],
    [1, 'OPTIONS'],
    [1, 'FOO'],
  ] as const);
  // the methods IIS answers itself (OPTIONS) or gives its static file handler (the rest), never ASMX
  if (m === 'PUT' || m === 'DELETE' || m === 'OPTIONS' || m === 'FOO') tags.push(`method:not-asmx@${at}`);
  return m;
}
