import { type RequestLine, routeReader } from '../contract/route';
import { targetOf } from '../contract/url';

/**
 * Which requests are copied to the legacy host, and with which of their headers: the copy's rules,
 * apart from how copies are carried (mirror.ts) and compared (copier.ts).
 */

/** Headers that belong to one connection, never forwarded (RFC 9110 7.6.1), and Expect, already answered. */
export const HOP_BY_HOP: readonly string[] = [
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
];

/** A message's raw headers (name, value, name, value...) without those named in `drop` (lower case). */
export function forwardable(raw: readonly string[], drop: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) if (!drop.includes(raw[i].toLowerCase())) out.push(raw[i], raw[i + 1]);
  return out;
}

/**
 * A dot segment or a backslash, as sent or %-escaped: IIS folds them before it routes
 * (`/AboutUs.asmx/../AuthCodeSending.asmx/AuthCode` is AuthCode there), and so does this service
 * (contract/url.ts); such a URL is not copied all the same, its path being another than it reads (the
 * copier moves it under the legacy site's directory by its length), perhaps an operation with effects.
 */
const READ_OTHERWISE_BY_IIS = /(?:^|[/\\])\.\.?(?:[/\\]|$)|\\/;
const dotsAndSlashes = (rawPath: string) => rawPath.replace(/%2e/gi, '.').replace(/%5c/gi, '\\').replace(/%2f/gi, '/');

/**
 * Whether a request may be copied at all: routed to an endpoint as the service routes it
 * (contract/route.ts), never to an operation with effects unless included, never by a path the legacy
 * host would read as another, and only with the URL the copier can move to the legacy site's
 * directory (copier.ts cuts BASE_PATH off by its length: a path in absolute form, or with BASE_PATH
 * %-escaped, is served but not copied).
 */
export function copyRule(basePath: string, include: ReadonlySet<string>): (req: RequestLine) => boolean {
  const routeOf = routeReader(basePath);
  const base = basePath.toLowerCase();
  return (req) => {
    const url = req.url ?? '';
    if (!url.startsWith('/') || url.slice(0, base.length).toLowerCase() !== base) return false;
    const route = routeOf(req);
    if (route === null || READ_OTHERWISE_BY_IIS.test(dotsAndSlashes(targetOf(req).rawPath))) return false;
    if (route.endpoint.operations.every((o) => o.effects !== true || include.has(o.name))) return true;
    // Any POST, or any /X.asmx/Op, might run the operation: only the service pages are copied.
    return route.kind === 'page';
  };
}
