import iconv from 'iconv-lite';
import type { Case } from '../legacy/corpus-kit';
import { OPS } from '../legacy/corpus-kit';
import type { Draws } from './draws';
import { formType, latin1Bytes, method, pairs } from './http';
import { longQuery, target } from './paths';
import { type Param, parameters } from './shapes';
import { soapCall } from './soap';
import { text, validationDiffers } from './values';

/**
 * One generated request, from its draws (draws.ts): a binding (SOAP 1.1, SOAP 1.2, HTTP GET, HTTP
 * POST) or a service page (?wsdl, ?disco, help, ?op=); an operation of any service, or a name no
 * service has; its parameters (shapes.ts, values.ts); the binding's own writing of them (soap.ts,
 * http.ts); the method and the path (paths.ts). Its tags say which of the rules keyed by a request's
 * features (rules.ts) it reaches, each with the draw that turned the feature on, so that the same
 * request without it can be made (run.ts asks that one too).
 */

export interface Site {
  namespace: string;
  /** '' for the site root, else e.g. `/StudentService`. */
  virtualDir: string;
}

export interface Generated {
  c: Case;
  /** `rule-key@draw`: the features the request has, and the draw that gave each. */
  tags: string[];
  /** The draws it was made from: `replay(made)` makes it again. */
  made: number[];
  binding: Binding;
}

export type Binding = 'soap11' | 'soap12' | 'get' | 'post' | 'page';

/** The parameters, their values' tags (a control character, a direction mark...) added to the request's. */
function drawParameters(d: Draws, names: readonly string[], soap: boolean, tags: string[]): Param[] {
  const params = parameters(d, names, soap);
  for (const p of params) tags.push(...p.value.tags.map((t) => `${t}@${p.at}`));
  return params;
}

const NON_ASCII_NAMES = ['GetAboutUsé', 'عملية', 'GetTokenDevice\u200f', 'Gét'];

/** The operation name written: the operation's own, mostly; another's, a wrong case, one no service has. */
function operationName(d: Draws, own: string, other: string, http: boolean, tags: string[]): string {
  const at = d.position;
  const name = d.weighted([
    [90, own],
    [3, 'NoSuchOp'],
    [2, own.toLowerCase()],
    [2, other],
    [http ? 3 : 0, 'non-ascii'],
  ] as const);
  if (name !== 'non-ascii') return name;
  tags.push(`operation:non-ascii@${at}`);
  const n = d.pick(NON_ASCII_NAMES);
  if (!d.chance(50)) return encodeURIComponent(n);
  tags.push(`target:raw-non-ascii@${at}`);
  return n;
}

/** A query string a SOAP call or a form does not read (but a service page asked by GET does), sometimes. */
function unreadQuery(d: Draws, tags: string[]): string | null {
  const at = d.position;
  if (!d.chance(4)) return null;
  const value = text(d, 1);
  if (validationDiffers(value)) tags.push(`value:validation-differs@${at}`);
  return `id=${encodeURIComponent(value)}`;
}

const PAGE_QUERIES = (op: string): Array<string | null> => [
  null,
  'wsdl',
  'WSDL',
  'disco',
  `op=${op}`,
  'op=NoSuchOp',
  'foo=bar',
  'wsdl&x=1',
  'op=',
  'Wsdl',
  'DISCO',
  'disco&op=x',
];

export function generate(d: Draws, site: Site, name: string): Generated {
  const tags: string[] = [];
  const binding = d.weighted<Binding>([
    [30, 'soap11'],
    [20, 'soap12'],
    [20, 'get'],
    [20, 'post'],
    [10, 'page'],
  ]);
  const o = d.pick(OPS);
  const others = OPS.filter((x) => x.service === o.service && x.name !== o.name);
  const other = others.length > 0 ? others[0].name : 'GetTokenDevice';
  const headers: Record<string, string> = {};
  let body: Buffer | null = null;
  let m: string;
  let path: { path: string; legacyPath?: string; tags: string[] };

  if (binding === 'soap11' || binding === 'soap12') {
    const opName = operationName(d, o.name, other, false, tags);
    const call = soapCall(d, binding === 'soap11' ? 11 : 12, opName, other, drawParameters(d, o.params, true, tags), site.namespace);
    tags.push(...call.tags);
    Object.assign(headers, call.headers);
    body = call.body;
    // a query string on a SOAP call is not read (request validation included)
    path = target(d, site.virtualDir, o.service, '', unreadQuery(d, tags));
    m = method(d, 'POST', tags);
  } else if (binding === 'get' || binding === 'post') {
    const opName = operationName(d, o.name, other, true, tags);
    const params = drawParameters(d, o.params, false, tags);
    const written = pairs(d, params, binding === 'get');
    tags.push(...written.tags);
    if (binding === 'get') {
      const query = longQuery(d, written.text === '' && d.chance(50) ? null : written.text, tags);
      // long values can make the query as long as the padding does: the same rule, their draws to blame
      if ((query ?? '').length >= 2040 && !tags.some((t) => t.startsWith('query:near-2048')))
        tags.push(...params.map((p) => `query:near-2048@${p.at}`));
      path = target(d, site.virtualDir, o.service, `/${opName}`, query);
      m = method(d, 'GET', tags);
    } else {
      const type = formType(d, tags);
      if (type.type !== null) headers['Content-Type'] = type.type;
      body = iconv.encode(written.text, type.charset);
      path = target(d, site.virtualDir, o.service, `/${opName}`, unreadQuery(d, tags));
      m = method(d, 'POST', tags);
    }
  } else {
    const opName = operationName(d, o.name, other, true, tags);
    path = target(d, site.virtualDir, o.service, '', longQuery(d, d.pick(PAGE_QUERIES(opName)), tags));
    const methodAt = d.position;
    m = method(d, 'GET', tags);
    // a POST to a service page is a SOAP request without a body or a Content-Type
    if (m === 'POST') tags.push(`soap:empty-body@${methodAt}`, `soap:content-type-not-its-own@${methodAt}`);
  }
  tags.push(...path.tags);
  if (m === 'HEAD') body = null;
  else if (body === null && m !== 'GET') body = Buffer.alloc(0);
  const c: Case = {
    name,
    method: m,
    // a request line and headers go out as bytes: non-ASCII as UTF-8
    path: latin1Bytes(path.path),
    ...(path.legacyPath === undefined ? {} : { legacyPath: latin1Bytes(path.legacyPath) }),
    headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, latin1Bytes(v)])),
    ...(body === null ? {} : { bodyBase64: body.toString('base64') }),
    kind: 'full',
    ...(d.chance(2) ? { httpVersion: '1.0' as const } : {}),
  };
  return { c, tags, made: [...d.made], binding };
}
