/**
 * Escaping, in one place: the XML writers' rules (as .NET's XmlWriter applies them) and the HTML
 * encoding ASP.NET applies to pages and to some error texts.
 */

const TEXT_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };
const MARKUP_ESCAPES: Readonly<Record<string, string>> = { ...TEXT_ESCAPES, '"': '&quot;', "'": '&#39;' };

/**
 * Element text as .NET's XmlTextWriter escapes it (XmlTextEncoder.Write): & < >, and the characters
 * XML does not allow (C0 controls but tab, LF and CR; U+FFFE, U+FFFF) as hexadecimal references;
 * quotes stay as they are. A reader's message can hold such a character.
 */
export function escapeText(s: string): string {
  return /[&<>\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]/.test(s) ? s.replace(/[&<>\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]/g, (c) => TEXT_ESCAPES[c] ?? `&#x${c.charCodeAt(0).toString(16).toUpperCase()};`) : s;
}

/** An attribute value in double quotes. */
export function escapeAttribute(s: string): string {
  return escapeText(s).replace(/"/g, '&quot;');
}

/** HTML or XML content and attributes in either quote style (ASP.NET's HttpUtility.HtmlEncode). */
export function escapeMarkup(s: string): string {
  return s.replace(/[&<>"']/g, (c) => MARKUP_ESCAPES[c]);
}
