/**
 * Escaping, in one place: the XML writers' rules (as .NET's XmlWriter applies them) and the HTML
 * encoding ASP.NET applies to pages and to some error texts.
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

/** HTML or XML content and attributes in either quote style (ASP.NET's HttpUtility.HtmlEncode). */
export function escapeMarkup(s: string): string {
  return s.replace(/[&<>"']/g, (c) => MARKUP_ESCAPES[c]);
}
