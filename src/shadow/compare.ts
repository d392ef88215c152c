import sax from 'sax';
import { sameRefusalAsMono } from './mono-quote';

/**
 * Two answers to the same request compared by meaning, as an ASMX client reads them: status, media
 * type, framing, Cache-Control, and the body by XML meaning when both bodies are XML (expanded names,
 * attributes without namespace declarations, text; white space between elements ignored), exactly
 * otherwise. One comparison for the legacy comparison tool (scripts/compare-legacy.ts), the corpus
 * tests and shadow traffic (mirror.ts).
 *
 * Allowances for a legacy host that is Mono rather than .NET on IIS (scripts/legacy/accepted.ts lists
 * them with their reasons): a legacy text with `{0}` placeholders is a template (Mono leaves some
 * unfilled), a lone LF in a legacy plain-text body counts as CRLF, request validation's refusal
 * quotes the value as Mono cuts it (mono-quote.ts), and help pages and runtime error pages compare
 * their media type without the charset.
 */

export interface Answer {
  status: number;
  /** content-type, cache-control, content-length, transfer-encoding: the headers that matter. */
  headers: Record<string, string | undefined>;
  body: string;
  /** The server gave no answer (refused, reset, timed out). */
  error?: string;
}

/** The headers of an answer that a comparison looks at (and a shadow report keeps). */
export const ANSWER_HEADERS = ['content-type', 'cache-control', 'content-length', 'transfer-encoding'] as const;

/** `full`; `page` (?wsdl/?disco, addresses already made comparable); `help` (status and type only); `error` (runtime error page). */
export type CaseKind = 'full' | 'page' | 'help' | 'error';

/** One difference: `kind` names it without the values of this request (for counting), `detail` says all. */
export interface Difference {
  kind: string;
  detail: string;
}

interface XmlEl {
  name: string; // {uri}local
  qname: string;
  attrs: Record<string, string>;
  kids: Array<XmlEl | string>;
}

/** Parses XML into elements by expanded name; returns null when the text is not well-formed XML. */
function parseXml(source: string): XmlEl | null {
  const text = source.replace(/^\uFEFF/, '');
  if (!/^\s*</.test(text)) return null;
  const parser = sax.parser(true, { xmlns: true });
  const stack: XmlEl[] = [];
  let root: XmlEl | null = null;
  let failed = false;
  parser.onerror = () => {
    failed = true;
  };
  parser.onopentag = (node) => {
    const tag = node as sax.QualifiedTag;
    const attrs: Record<string, string> = {};
    for (const a of Object.values(tag.attributes)) {
      if (a.prefix === 'xmlns' || a.name === 'xmlns') continue;
      attrs[`{${a.uri}}${a.local}`] = a.value;
    }
    const el: XmlEl = { name: `{${tag.uri}}${tag.local}`, qname: tag.name, attrs, kids: [] };
    if (stack.length > 0) stack[stack.length - 1].kids.push(el);
    else if (root) failed = true;
    else root = el;
    stack.push(el);
  };
  const onText = (t: string) => {
    if (stack.length === 0) return;
    const kids = stack[stack.length - 1].kids;
    if (typeof kids[kids.length - 1] === 'string') kids[kids.length - 1] += t;
    else kids.push(t);
  };
  parser.ontext = onText;
  parser.oncdata = onText;
  parser.onclosetag = () => {
    const el = stack.pop()!;
    if (el.kids.some((k) => typeof k !== 'string')) el.kids = el.kids.filter((k) => typeof k !== 'string' || k.trim() !== '');
    el.kids = el.kids.map((k) => (typeof k === 'string' ? k.replace(/\r\n?/g, '\n') : k));
  };
  try {
    parser.write(text).close();
  } catch {
    return null;
  }
  return failed || !root ? null : root;
}

/** Whether ours says what the legacy text says, legacy `{n}` placeholders standing for any text. */
function textMatches(legacy: string, ours: string): boolean {
  if (legacy === ours) return true;
  if (!/\{\d+\}/.test(legacy)) return false;
  const parts = legacy.split(/\{\d+\}/).map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('[\\s\\S]*?')}$`).test(ours);
}

const short = (s: string | undefined, n = 160) => {
  if (s === undefined) return '(none)';
  const j = JSON.stringify(s);
  return j.length > n ? `${j.slice(0, n - 12)}…(${s.length} chars)` : j;
};

/** A location without the positions of this document (`/a[2]/b` is `/a/b`), for kinds. */
const general = (at: string) => at.replace(/\[\d+\]/g, '') || '/';

function diffXml(l: XmlEl, o: XmlEl, at: string, out: Difference[], limit = 4, index = ''): void {
  if (out.length >= limit) return;
  const here = `${at}/${l.qname}${index}`;
  const push = (kind: string, detail: string) => out.push({ kind: `body ${kind}`, detail: `body ${detail}` });
  if (l.name !== o.name) {
    push(`element at ${general(at)}`, `element ${at || '/'}: legacy <${l.name}> vs ours <${o.name}>`);
    return;
  }
  const keys = new Set([...Object.keys(l.attrs), ...Object.keys(o.attrs)]);
  for (const k of keys) {
    const lv = l.attrs[k];
    const ov = o.attrs[k];
    if (lv === undefined || ov === undefined || !textMatches(lv, ov))
      push(`attribute ${general(here)}/@${k}`, `${here}/@${k}: legacy ${short(lv)} vs ours ${short(ov)}`);
  }
  const n = Math.max(l.kids.length, o.kids.length);
  for (let i = 0; i < n && out.length < limit; i++) {
    const lk = l.kids[i];
    const ok = o.kids[i];
    const pos = `${here}[${i}]`;
    if (lk === undefined || ok === undefined) {
      const desc = (k: XmlEl | string | undefined) =>
        k === undefined ? '(nothing)' : typeof k === 'string' ? `text ${short(k)}` : `<${k.qname}> ${short(serialize(k), 100)}`;
      push(
        `children of ${general(here)}`,
        `${here}: ${l.kids.length} vs ${o.kids.length} children; from #${i}: legacy ${desc(lk)} vs ours ${desc(ok)}`,
      );
      return;
    }
    if (typeof lk === 'string' || typeof ok === 'string') {
      if (typeof lk !== 'string' || typeof ok !== 'string') {
        push(
          `content of ${general(here)}`,
          `${pos}: legacy ${typeof lk === 'string' ? `text ${short(lk)}` : `<${lk.qname}>`} vs ours ${typeof ok === 'string' ? `text ${short(ok)}` : `<${ok.qname}>`}`,
        );
      } else if (!textMatches(lk, ok)) {
        push(`text of ${general(here)}`, `${here} text: legacy ${short(lk, 400)} vs ours ${short(ok, 400)}`);
      }
      continue;
    }
    const same = l.kids.filter((k) => typeof k !== 'string' && k.name === lk.name);
    diffXml(lk, ok, here, out, limit, same.length > 1 ? `[${same.indexOf(lk) + 1}]` : '');
  }
}

function serialize(el: XmlEl): string {
  return `<${el.qname}>${el.kids.map((k) => (typeof k === 'string' ? k : serialize(k))).join('')}</${el.qname}>`;
}

export const BASE_PLACEHOLDER = '{BASE_URL}';

/** Replaces a server's own base URL (and the requested path behind it) in a service page. */
export function placeholdBase(body: string, base: string, requestPath: string): string {
  const b = base.replace(/\/$/, '');
  const p = requestPath.replace(/\?.*$/, '');
  return body
    .split(b + p)
    .join(`${BASE_PLACEHOLDER}{PATH}`)
    .split(b)
    .join(BASE_PLACEHOLDER);
}

/**
 * The service's own addresses (a scheme and host before a path to an .asmx) with the host taken out:
 * two hosts serving the same service write their own names into the WSDL, disco and help pages, and
 * addresses that differ only by host are equal. Other URLs (a school's address in the data) count.
 */
function withoutServiceHosts(body: string): string {
  return body.replace(/\bhttps?:\/\/[^/\s"'<>]+(?=\/[^\s"'<>]*?\.asmx)/gi, '{host}');
}

function framing(a: Pick<Answer, 'headers'>): string {
  if (a.headers['transfer-encoding']) return `transfer-encoding: ${a.headers['transfer-encoding']}`;
  if (a.headers['content-length'] !== undefined) return 'content-length';
  return 'neither';
}

/**
 * The differences between a legacy answer and ours; empty when they agree. Bodies of `page` cases
 * must already have their addresses made comparable (placeholdBase or withoutServiceHosts).
 */
function differences(kind: CaseKind, legacy: Answer, ours: Answer): Difference[] {
  const d: Difference[] = [];
  const add = (what: string, l: string, o: string) =>
    d.push({ kind: `${what}: legacy ${l}, ours ${o}`, detail: `${what}: legacy ${l} vs ours ${o}` });
  if (legacy.error || ours.error) {
    if (legacy.error !== ours.error) {
      d.push({
        kind: `transport: ${legacy.error ? 'legacy' : 'ours'} gave no answer`,
        detail: `transport: legacy ${legacy.error ?? 'ok'} vs ours ${ours.error ?? 'ok'}`,
      });
    }
    if (legacy.error && ours.error) return d;
  }
  if (legacy.status !== ours.status) add('status', String(legacy.status), String(ours.status));
  const mediaType = (t: string | undefined) => (kind === 'error' || kind === 'help' ? t?.split(';')[0] : t);
  const lt = mediaType(legacy.headers['content-type']);
  const ot = mediaType(ours.headers['content-type']);
  if (lt !== ot) add('content-type', short(lt), short(ot));
  if (kind === 'help') return d;
  if (framing(legacy) !== framing(ours)) add('framing', framing(legacy), framing(ours));
  const lc = legacy.headers['cache-control'];
  const oc = ours.headers['cache-control'];
  if (lc !== oc) add('cache-control', short(lc), short(oc));
  if (kind === 'error') {
    const page = (body: string) => (body === '' ? 'empty' : /Runtime Error/.test(body) ? 'runtime error page' : 'another body');
    if (page(legacy.body) !== page(ours.body)) {
      d.push({
        kind: `body: legacy ${page(legacy.body)}, ours ${page(ours.body)}`,
        detail: `body: legacy ${short(legacy.body)} vs ours ${short(ours.body)}`,
      });
    }
    return d;
  }
  const lx = legacy.body.trim() ? parseXml(legacy.body) : null;
  const ox = ours.body.trim() ? parseXml(ours.body) : null;
  if (lx && ox) {
    diffXml(lx, ox, '', d);
  } else {
    // legacy writes LF where .NET writes CRLF; a refusal's quote is the value as sent, its own line ends kept
    const lb = legacy.body.replace(/\r?\n/g, '\r\n');
    if (!textMatches(lb, ours.body) && !sameRefusalAsMono(legacy.body.replace(/\r?\n$/, '\r\n'), ours.body)) {
      const what = lx ? ' (legacy XML, ours not)' : ox ? ' (ours XML, legacy not)' : '';
      d.push({ kind: `body text${what}`, detail: `body${what}: legacy ${short(legacy.body, 300)} vs ours ${short(ours.body, 300)}` });
    }
  }
  return d;
}

/** The differences as lines of text; empty when the answers agree. */
export function compareAnswers(kind: CaseKind, legacy: Answer, ours: Answer): string[] {
  if (identical(legacy, ours)) return [];
  return differences(kind, legacy, ours).map((x) => x.detail);
}

/** The same bytes and the same status, type, framing and caching: nothing to compare further, whatever the kind. */
const identical = (a: Answer, b: Answer): boolean => !a.error && !b.error && a.body === b.body && sameAnswer(a, b);

/**
 * How a live exchange is compared, from the request and the legacy answer: a help page (`GET /X.asmx`
 * with any query but ?wsdl or ?disco) by status and type, as the hosts design their own; ASP.NET's runtime error page (an HTML
 * answer with an error status) as such a page; ?wsdl, ?disco and everything else in full.
 */
function kindOf(method: string, url: string, legacy: Answer): CaseKind {
  if (legacy.status >= 400 && /^text\/html/i.test(legacy.headers['content-type'] ?? '')) return 'error';
  if (method !== 'GET') return 'full';
  // a fragment is no part of what the server reads (a client sending one raw is sent its page without it)
  const target = url.replace(/#[\s\S]*$/, '');
  const q = target.indexOf('?');
  const path = q === -1 ? target : target.slice(0, q);
  const query = q === -1 ? '' : target.slice(q + 1).toLowerCase();
  return /\.asmx$/i.test(path) && !/^(wsdl|disco)\b/.test(query) ? 'help' : 'full';
}

/** Two answers to one live request compared: service addresses without their hosts, the kind from the request. */
export function compareLive(method: string, url: string, legacy: Answer, ours: Answer): Difference[] {
  if (identical(legacy, ours)) return [];
  const kind = kindOf(method, url, legacy);
  return differences(kind, { ...legacy, body: withoutServiceHosts(legacy.body) }, { ...ours, body: withoutServiceHosts(ours.body) });
}

/** Whether two answers agree in all a comparison looks at but the body (status, media type, framing, Cache-Control). */
export function sameAnswer(a: Pick<Answer, 'status' | 'headers'>, b: Pick<Answer, 'status' | 'headers'>): boolean {
  return (
    a.status === b.status &&
    a.headers['content-type'] === b.headers['content-type'] &&
    a.headers['cache-control'] === b.headers['cache-control'] &&
    framing(a) === framing(b)
  );
}
