import type { Draws } from './draws';

/**
 * The path a request is sent to, changed as clients and attackers change it: the case of the
 * service's name, its extension or the virtual directory (the legacy host, whose file system is
 * case-sensitive where IIS's is not, is asked the path in its own case), `//`, `/./` and `/x/../`,
 * a %-escaped letter, `%20` and `%00` next to the names, a trailing slash, a raw `#fragment`, paths
 * outside the services, and a query string near IIS's 2,048 characters.
 */

export interface Target {
  /** What our service is asked. */
  path: string;
  /** What the legacy host is asked, when not `path`. */
  legacyPath?: string;
  tags: string[];
}

const OUTSIDE = [
  '/',
  '/AboutUs',
  '/AboutUs/GetAboutUs',
  '/NoSuch.asmx',
  '/AboutUs.asmx.cs',
  '/web.config',
  '/App_Code/Store.cs',
  '/AboutUs.aspx',
  '/AboutUs.asmxx',
  '/bin/',
];

/** `{vdir}/{Service}.asmx{rest}?{query}`, with at most one change drawn to its path. */
export function target(d: Draws, vdir: string, service: string, rest: string, query: string | null): Target {
  const tags: string[] = [];
  const q = query === null ? '' : `?${query}`;
  const plain = `${vdir}/${service}.asmx${rest}`;
  const at = d.position;
  const change = d.weighted([
    [85, 'none'],
    [2, 'case-service'],
    [1, 'case-extension'],
    [vdir === '' ? 0 : 1, 'case-vdir'],
    [1, 'double-slash'],
    [1, 'dot'],
    [1, 'dot-dot'],
    [1, 'escaped-letter'],
    [1, 'percent-20'],
    [1, 'nul'],
    [1, 'trailing-slash'],
    [1, 'outside'],
    [1, 'fragment'],
  ] as const);
  const tag = (name: string) => tags.push(`path:${name}@${at}`);
  const asLegacy = (path: string): Target => ({ path: path + q, legacyPath: plain + q, tags });
  switch (change) {
    case 'case-service':
      return asLegacy(`${vdir}/${d.pick([service.toLowerCase(), service.toUpperCase()])}.asmx${rest}`);
    case 'case-extension':
      return asLegacy(`${vdir}/${service}.${d.pick(['ASMX', 'Asmx'])}${rest}`);
    case 'case-vdir':
      return asLegacy(`${vdir.toLowerCase()}/${service}.asmx${rest}`);
    case 'double-slash':
    case 'dot':
    case 'dot-dot': {
      tag('dot-segments');
      const piece = change === 'double-slash' ? '/' : change === 'dot' ? '/.' : '/x/..';
      // before the service's name, or between it and the operation's
      const where = rest === '' || d.chance(50) ? `${vdir}${piece}/${service}.asmx${rest}` : `${vdir}/${service}.asmx${piece}${rest}`;
      return { path: where + q, tags };
    }
    case 'escaped-letter': {
      const i = d.int(service.length);
      tag('escaped-letter');
      return {
        path: `${vdir}/${service.slice(0, i)}%${service.charCodeAt(i).toString(16).toUpperCase()}${service.slice(i + 1)}.asmx${rest}${q}`,
        tags,
      };
    }
    case 'percent-20':
      tag('percent-20');
      return { path: d.pick([`${vdir}/${service}%20.asmx${rest}`, `${plain}%20`, `${vdir}/%20${service}.asmx${rest}`]) + q, tags };
    case 'nul':
      tag('nul');
      return { path: d.pick([`${plain}%00`, `${vdir}/${service}%00.asmx${rest}`]) + q, tags };
    case 'trailing-slash':
      return { path: `${plain}/${q}`, tags };
    case 'outside':
      tag('outside');
      return { path: `${vdir}${d.pick(OUTSIDE)}${q}`, tags };
    case 'fragment':
      tag('fragment');
      return { path: `${plain}${q}#${d.pick(['x', '', 'wsdl'])}`, tags };
    default:
      return { path: plain + q, tags };
  }
}

/** A query padded to a length near 2,048 characters (IIS's maxQueryString), sometimes. */
export function longQuery(d: Draws, query: string | null, tags: string[]): string | null {
  const at = d.position;
  if (!d.chance(3)) return query;
  tags.push(`query:near-2048@${at}`);
  const length = 2040 + d.int(17);
  const head = query === null || query === '' ? 'pad=' : `${query}&pad=`;
  return head.length >= length ? head : head + 'a'.repeat(length - head.length);
}
