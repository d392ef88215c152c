/**
 * Escaping, in one place: the XML writers' rules (as .NET's XmlWriter applies them), the markup
 * escape of the pages we write ourselves, and ASP.NET's HttpUtility.HtmlEncode where .NET applies it
 * to text a client sent.
 */

const TEXT_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };
const MARKUP_ESCAPES: Readonly<Record<string, string>> = { ...TEXT_ESCAPES, '"': '&quot;', "'": '&#39;' };

/** Element text as .NET's XmlWriter escapes it: only & < > (quotes stay as they are). */
export function escapeText(s: string): string {
  return /[&<>]/.test(s) ? s.replace(/[&<>]/g, (c) => TEXT_ESCAPES[c]) : s;
}

/** An attribute value in double quotes. */
export function escapeAttribute(s: string): string {
  return escapeText(s).replace(/"/g, '&quot;');
}

/** HTML or XML content and attributes in either quote style: the five markup characters, nothing else. */
export function escapeMarkup(s: string): string {
  return s.replace(/[&<>"']/g, (c) => MARKUP_ESCAPES[c]);
}

/**
 * HttpUtility.HtmlEncode as an ASP.NET 4 site without `<httpRuntime targetFramework>` runs it
 * (WebUtility.HtmlEncode, System/net/System/Net/WebUtility.cs): the five markup characters, and
 * U+00A0..U+00FF as decimal references (`é` is `&#233;`). Everything else is written as it is:
 * Arabic, and a surrogate, paired or not, since only a 4.5 target (UnicodeEncodingConformance.Strict)
 * writes a pair as one reference.
 */
export function htmlEncode(s: string): string {
  return s.replace(/[&<>"'\u00a0-\u00ff]/g, (c) => MARKUP_ESCAPES[c] ?? `&#${c.charCodeAt(0)};`);
}

const NAMED: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', quot: '"' };

/** What htmlEncode (or Mono's HtmlEncode) wrote, read back: the four names and decimal references. */
export function htmlDecode(s: string): string {
  return s.replace(/&(lt|gt|amp|quot|#\d{1,7});/g, (whole, e: string) => {
    if (!e.startsWith('#')) return NAMED[e];
    const code = Number(e.slice(1));
    return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}
