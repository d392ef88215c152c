/**
 * The URL without its password, for messages and logs. Apart from the PostgreSQL store so that
 * what names the store (the start line, a refusal at start) does not load pg where SQLite is used.
 */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return 'DATABASE_URL';
  }
}
