/**
 * Escaping, in one place: the XML writers' rules (as .NET's XmlWriter applies them), the markup
 * escape of the pages we write ourselves, and ASP.NET's HttpUtility.HtmlEncode where .NET applies it
 * to text a client sent.
 */

const TEXT_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };
const MARKUP_ESCAPES: Readonly<Record<string, string>> = { ...TEXT_ESCAPES, '"': '&quot;', "'": '&#39;' };

/**
 * Element text as .NET's XmlTextWriter escapes it (XmlTextEncoder.Write): & < >, and the characters
 * XML does not allow (C0 controls but tab, LF and CR; U+FFFE, U+FFFF) as hexadecimal references;
 * quotes stay as they are. A reader's message can hold such a character.
 */
export function escapeText(s: string): string {
  return /[&<>\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]/.test(s)
    ? s.replace(
        /[&<>\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]/g,
        (c) => TEXT_ESCAPES[c] ?? `&#x${c.charCodeAt(0).toString(16).toUpperCase()};`,
      )
    : s;
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
