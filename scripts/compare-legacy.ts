/**
 * Puts the same corpus of requests to the legacy ASMX host and to ours and reports every difference.
 *
 *   npx tsx scripts/compare-legacy.ts LEGACY_URL OURS_URL [--only SUBSTRING]... [--verbose]
 *   npx tsx scripts/compare-legacy.ts LEGACY_URL [OURS_URL] --record [--out FILE]
 *   npx tsx scripts/compare-legacy.ts --from test/fixtures/corpus.json OURS_URL [--only SUBSTRING]...
 *   npx tsx scripts/compare-legacy.ts --list [--only SUBSTRING]
 *
 * Compared per case: status; Content-Type (exact); framing (Content-Length vs chunked); Cache-Control;
 * the body, by XML meaning when both bodies are XML (expanded names, attributes without namespace
 * declarations, text; white space between elements ignored), exactly otherwise.
 *
 * Known ways the legacy host (Mono) is not .NET on IIS, and how they are allowed for:
 * - its messages keep `{0}` placeholders unfilled: a legacy text with placeholders is a template, each
 *   `{n}` standing for any text (so the text before the first `{` must match, and what follows too);
 * - it writes LF where .NET writes CRLF: in plain-text bodies each lone LF of the legacy body counts as CRLF;
 * - its help pages are its own design: `GET /X.asmx` and `?op=` compare status and Content-Type only;
 * - so is its runtime error page (what a remote client gets where ASP.NET, not the service, refuses a
 *   request), and it omits the charset ASP.NET appends to its `text/html`: `error` cases compare status,
 *   media type, framing and Cache-Control, and that both bodies are a runtime error page (or both empty);
 * - its paths are case-sensitive: a case may ask ours `path` and the legacy host `legacyPath`;
 * - its own response headers (Server, Connection, ...) are not looked at.
 * `?wsdl`/`?disco` documents are compared after each server's own base URL (and the requested path) is
 * replaced by a placeholder.
 *
 * `--record` writes the corpus with the legacy answers to test/fixtures/corpus.json (or --out FILE);
 * with `--only`, just those cases are recorded again and the rest of the file is kept as it is.
 * `--namespace NS` uses the corpus for a service namespace without a trailing slash instead (recorded
 * to test/fixtures/corpus-namespace.json; the legacy host and ours must both serve NS).
 * The legacy base URL in bodies is replaced by `{BASE_URL}`, so the answers can be replayed without the host.
 * The corpus (`buildCorpus`) and `ask` are exported for that; the comparison is src/shadow/compare.ts,
 * which shadow traffic uses too.
 */
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import iconv from 'iconv-lite';
import { ANSWER_HEADERS, type Answer, BASE_PLACEHOLDER, type CaseKind, compareAnswers, placeholdBase } from '../src/shadow/compare';

// ---------------------------------------------------------------------------------------------------
// The corpus

export interface Case {
  name: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  /** UTF-8 text of the request body (absent: no body). */
  body?: string;
  /** The body as raw bytes, when it is not UTF-8 text (instead of `body`). */
  bodyBase64?: string;
  /** The path to ask the legacy host (case-sensitive there), when not `path`. */
  legacyPath?: string;
  /** How the answers are compared: `full`, `page` (?wsdl/?disco), `help` (status and type only), `error` (runtime error page). */
  kind: CaseKind;
  /** Sent as HTTP/1.0 (as nginx speaks to its upstream by default) instead of HTTP/1.1. */
  httpVersion?: '1.0';
}

const NS = 'http://tempuri.org/';
const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';
const SOAP12 = 'http://www.w3.org/2003/05/soap-envelope';
const XSI = 'http://www.w3.org/2001/XMLSchema-instance';
const XSD = 'http://www.w3.org/2001/XMLSchema';
const DECL = '<?xml version="1.0" encoding="utf-8"?>';
const CT11 = 'text/xml; charset=utf-8';
const CT12 = 'application/soap+xml; charset=utf-8';
const FORM = 'application/x-www-form-urlencoded';

interface Op {
  service: string;
  name: string;
  params: string[];
}

const OPS: Op[] = [
  { service: 'AuthCodeSending', name: 'AuthCode', params: ['code', 'phone'] },
  { service: 'GetStudnetsMarks', name: 'GetStudentsMarks', params: ['StudnetID', 'SubjectID'] },
  { service: 'AboutUs', name: 'GetAboutUs', params: [] },
  { service: 'NotificationNotes', name: 'GetStudentSchool', params: ['school_base_url', 'show_active'] },
  { service: 'PushNotificationMobile', name: 'GetTokenDevice', params: ['id'] },
  { service: 'PushNotificationMobile', name: 'GetServerKeyAndSender', params: [] },
];
const SERVICES = [...new Set(OPS.map((o) => o.service))];

function op(name: string): Op {
  const o = OPS.find((x) => x.name === name);
  if (!o) throw new Error(`no op ${name}`);
  return o;
}
const servicePath = (o: Op) => `/${o.service}.asmx`;

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Parameter values as the caller means them: text (escaped), raw XML (`{raw}`), or absent (null). */
type Val = string | { raw: string } | null;
type Params = Array<[string, Val]>;

/** A data row's value on the SOAP wire: show_active travels as the UTF-16 code of its character. */
function soapValue(param: string, v: string): string {
  return param === 'show_active' ? (v.length === 1 ? String(v.charCodeAt(0)) : v) : v;
}

function opElement(o: Op | string, params: Params, opts: { nl?: string; indent?: string } = {}): string {
  const name = typeof o === 'string' ? o : o.name;
  const nl = opts.nl ?? '';
  const ind = opts.indent ?? '';
  const kids = params
    .filter(([, v]) => v !== null)
    .map(([k, v]) => `${nl}${ind}  <${k}>${typeof v === 'string' ? esc(v) : v!.raw}</${k}>`)
    .join('');
  return kids === '' ? `<${name} xmlns="${NS}" />` : `<${name} xmlns="${NS}">${kids}${nl}${ind}</${name}>`;
}

interface EnvOpts {
  decl?: string;
  header?: string;
  /** newline to put between elements (pretty printing), '' for none */
  nl?: string;
}

function envelope(version: 11 | 12, inner: string, opts: EnvOpts = {}): string {
  const nl = opts.nl ?? '';
  const header = opts.header !== undefined ? `${nl}  ${opts.header}` : '';
  return (
    `${opts.decl ?? DECL}${nl}<soap:Envelope xmlns:xsi="${XSI}" xmlns:xsd="${XSD}" ` +
    `xmlns:soap="${version === 11 ? SOAP11 : SOAP12}">${header}${nl}  <soap:Body>${nl}    ${inner}${nl}  </soap:Body>${nl}</soap:Envelope>`
  );
}

/** The op element, parameters given as data values (SOAP conversion applied). */
function soapOp(o: Op, values: Array<string | null>, nl = ''): string {
  return opElement(
    o,
    o.params.map((p, i) => [p, values[i] === null || values[i] === undefined ? null : soapValue(p, values[i]!)]),
    nl ? { nl, indent: '    ' } : {},
  );
}

const action = (name: string) => `"${NS}${name}"`;

function form(pairs: Array<[string, string]>): string {
  return pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
}

class Corpus {
  readonly cases: Case[] = [];
  private readonly names = new Set<string>();

  add(c: Omit<Case, 'kind'> & { kind?: CaseKind }): void {
    if (this.names.has(c.name)) throw new Error(`duplicate case name ${c.name}`);
    this.names.add(c.name);
    const headers = { ...c.headers };
    this.cases.push({ ...c, headers, kind: c.kind ?? 'full' });
  }

  soap11(name: string, path: string, body: string, soapAction: string | null, contentType: string | null = CT11): void {
    const headers: Record<string, string> = {};
    if (contentType !== null) headers['Content-Type'] = contentType;
    if (soapAction !== null) headers.SOAPAction = soapAction;
    this.add({ name, method: 'POST', path, headers, body });
  }

  soap12(name: string, path: string, body: string, contentType: string | null = CT12, extra: Record<string, string> = {}): void {
    const headers: Record<string, string> = {};
    if (contentType !== null) headers['Content-Type'] = contentType;
    this.add({ name, method: 'POST', path, headers: { ...headers, ...extra }, body });
  }

  get(name: string, path: string, extra: Partial<Case> = {}): void {
    this.add({ name, method: 'GET', path, headers: {}, ...extra });
  }

  post(name: string, path: string, body: string, contentType: string | null = FORM): void {
    this.add({ name, method: 'POST', path, headers: contentType === null ? {} : { 'Content-Type': contentType }, body });
  }

  /** One data row on all four bindings. */
  allBindings(o: Op, label: string, values: Array<string | null>): void {
    const p = servicePath(o);
    this.soap11(`soap11/${o.name}/${label}`, p, envelope(11, soapOp(o, values)), action(o.name));
    this.soap12(`soap12/${o.name}/${label}`, p, envelope(12, soapOp(o, values)));
    const pairs = o.params.flatMap((k, i) => (values[i] === null ? [] : [[k, values[i]!] as [string, string]]));
    const q = form(pairs);
    this.get(`get/${o.name}/${label}`, `${p}/${o.name}${q ? `?${q}` : ''}`);
    this.post(`post/${o.name}/${label}`, `${p}/${o.name}`, q);
  }
}

const ALNOOR = 'http://alnoor.school.example';
const RAFIDAIN = 'http://rafidain.school.example';
const ARABIC_SCHOOL = 'http://مدرسة.example';
const BIG = 'http://big.school.example';

export function buildCorpus(): Case[] {
  const c = new Corpus();
  const auth = op('AuthCode');
  const marks = op('GetStudentsMarks');
  const about = op('GetAboutUs');
  const school = op('GetStudentSchool');
  const token = op('GetTokenDevice');
  const serverKey = op('GetServerKeyAndSender');
  const SCHOOL = servicePath(school);
  const PUSH = servicePath(token);

  // ---- every operation on every binding, normal and edge data
  const twoStringRows: Array<[string, [string, string]]> = [
    ['normal', ['1234', '07701234567']],
    ['empty', ['', '']],
    ['whitespace', ['  12 34 ', '\t0770 ']],
    ['arabic', ['١٢٣٤', 'هاتف ٠٧٧٠']],
    ['specials', ['a&b<c>"d"', "'x' & <y>"]],
  ];
  for (const o of [auth, marks]) {
    for (const [label, row] of twoStringRows) c.allBindings(o, label, row);
    c.allBindings(o, 'first-absent', [null, '5']);
    c.allBindings(o, 'second-absent', ['1001', null]);
  }
  c.allBindings(about, 'normal', []);
  c.allBindings(serverKey, 'normal', []);

  const schoolRows: Array<[string, [string | null, string | null]]> = [
    ['alnoor-1', [ALNOOR, '1']],
    ['alnoor-0', [ALNOOR, '0']],
    ['alnoor-x', [ALNOOR, 'x']],
    ['alnoor-space', [ALNOOR, ' ']],
    ['alnoor-arabic-char', [ALNOOR, 'ن']],
    ['rafidain-empty-device', [RAFIDAIN, '1']],
    ['arabic-school-1', [ARABIC_SCHOOL, '1']],
    ['big-school-1', [BIG, '1']],
    ['big-school-0', [BIG, '0']],
    ['unknown-school', ['http://nowhere.example', '1']],
    ['empty-url', ['', '1']],
    ['url-whitespace', [` ${ALNOOR} `, '1']],
    ['url-case', [ALNOOR.toUpperCase(), '1']],
    ['url-trailing-slash', [`${ALNOOR}/`, '1']],
    ['url-absent', [null, '1']],
  ];
  for (const [label, row] of schoolRows) c.allBindings(school, label, row);

  const tokenRows: Array<[string, string | null]> = [
    ['known', 'dev-1001'],
    ['specials-1004', 'dev-1004'],
    ['arabic-token', 'dev-3001'],
    ['empty-token', 'dev-empty'],
    ['unknown', 'no-such-device'],
    ['empty-id', ''],
    ['id-whitespace', ' dev-1001 '],
    ['id-case', 'DEV-1001'],
    ['id-arabic', 'جهاز'],
    ['id-specials', `a&b<c>"d"'`],
    ['id-absent', null],
  ];
  for (const [label, v] of tokenRows) c.allBindings(token, label, [v]);

  // ---- SOAP routing
  const tokBody11 = envelope(11, soapOp(token, ['dev-1001']));
  const tokBody12 = envelope(12, soapOp(token, ['dev-1001']));
  const unknownBody11 = envelope(11, opElement('NoSuchOp', [['id', 'dev-1001']]));
  const unknownBody12 = envelope(12, opElement('NoSuchOp', [['id', 'dev-1001']]));
  const keyBody11 = envelope(11, soapOp(serverKey, []));
  const keyBody12 = envelope(12, soapOp(serverKey, []));
  const soapActions: Array<[string, string]> = [
    ['unquoted', `${NS}GetTokenDevice`],
    ['half-quoted-start', `"${NS}GetTokenDevice`],
    ['half-quoted-end', `${NS}GetTokenDevice"`],
    ['empty-quoted', '""'],
    ['empty', ''],
    ['unknown', action('NoSuchOp')],
    ['unknown-unquoted', 'urn:whatever'],
    ['wrong-case-op', action('gettokendevice')],
    ['wrong-case-ns', `"HTTP://TEMPURI.ORG/GetTokenDevice"`],
    ['other-namespace', '"http://example.org/GetTokenDevice"'],
    ['op-name-only', '"GetTokenDevice"'],
    ['trailing-space-inside', `"${NS}GetTokenDevice "`],
    ['spaces-around', `  "${NS}GetTokenDevice"  `],
    ['single-quotes', `'${NS}GetTokenDevice'`],
    ['other-service-op', action('AuthCode')],
  ];
  for (const [label, a] of soapActions) c.soap11(`routing/soap11/action-${label}`, PUSH, tokBody11, a);
  c.soap11('routing/soap11/no-action-known-body', PUSH, tokBody11, null);
  c.soap11('routing/soap11/no-action-unknown-body', PUSH, unknownBody11, null);
  c.soap11('routing/soap11/no-action-other-service-body', PUSH, envelope(11, soapOp(auth, ['1', '2'])), null);
  c.soap11('routing/soap11/action-key-body-token', PUSH, tokBody11, action('GetServerKeyAndSender'));
  c.soap11('routing/soap11/action-token-body-key', PUSH, keyBody11, action('GetTokenDevice'));
  c.soap11('routing/soap11/action-known-body-unknown', PUSH, unknownBody11, action('GetTokenDevice'));
  c.soap11('routing/soap11/action-unknown-body-unknown', PUSH, unknownBody11, action('NoSuchOp'));
  c.soap11('routing/soap11/school-action-token-body', SCHOOL, tokBody11, action('GetStudentSchool'));
  c.soap11('routing/soap11/ct-no-charset', PUSH, tokBody11, action('GetTokenDevice'), 'text/xml');
  c.soap11('routing/soap11/ct-upper-case', PUSH, tokBody11, action('GetTokenDevice'), 'TEXT/XML; CHARSET=UTF-8');
  c.soap11('routing/soap11/ct-charset-quoted', PUSH, tokBody11, action('GetTokenDevice'), 'text/xml; charset="utf-8"');
  c.soap11('routing/soap11/as-soap12-ct', PUSH, tokBody11, null, CT12);
  c.soap11('routing/soap11/as-soap12-ct-with-action', PUSH, tokBody11, action('GetTokenDevice'), CT12);
  c.soap11('routing/soap11/as-text-plain', PUSH, tokBody11, action('GetTokenDevice'), 'text/plain; charset=utf-8');
  c.soap11('routing/soap11/as-text-plain-no-action', PUSH, tokBody11, null, 'text/plain');
  c.soap11('routing/soap11/as-application-xml', PUSH, tokBody11, action('GetTokenDevice'), 'application/xml; charset=utf-8');
  c.soap11('routing/soap11/as-application-xml-no-action', PUSH, tokBody11, null, 'application/xml');
  c.soap11('routing/soap11/no-content-type', PUSH, tokBody11, action('GetTokenDevice'), null);
  c.soap11('routing/soap11/no-content-type-no-action', PUSH, tokBody11, null, null);
  c.soap11('routing/soap11/as-form', PUSH, tokBody11, action('GetTokenDevice'), FORM);

  const ct12a = (a: string) => `application/soap+xml; charset=utf-8; action="${a}"`;
  c.soap12('routing/soap12/action-known-body-known', PUSH, tokBody12, ct12a(`${NS}GetTokenDevice`));
  c.soap12('routing/soap12/action-unquoted', PUSH, tokBody12, `application/soap+xml; charset=utf-8; action=${NS}GetTokenDevice`);
  c.soap12('routing/soap12/action-only-param', PUSH, tokBody12, `application/soap+xml; action="${NS}GetTokenDevice"`);
  c.soap12('routing/soap12/action-other-op-body-token', PUSH, tokBody12, ct12a(`${NS}GetServerKeyAndSender`));
  c.soap12('routing/soap12/action-token-body-key', PUSH, keyBody12, ct12a(`${NS}GetTokenDevice`));
  c.soap12('routing/soap12/action-unknown-body-known', PUSH, tokBody12, ct12a(`${NS}NoSuchOp`));
  c.soap12('routing/soap12/action-unknown-body-unknown', PUSH, unknownBody12, ct12a(`${NS}NoSuchOp`));
  c.soap12('routing/soap12/action-known-body-unknown', PUSH, unknownBody12, ct12a(`${NS}GetTokenDevice`));
  c.soap12('routing/soap12/action-empty-body-unknown', PUSH, unknownBody12, ct12a(''));
  c.soap12('routing/soap12/action-wrong-case-body-unknown', PUSH, unknownBody12, ct12a(`${NS}gettokendevice`));
  c.soap12('routing/soap12/no-action-body-unknown', PUSH, unknownBody12);
  c.soap12('routing/soap12/no-action-other-service-body', PUSH, envelope(12, soapOp(auth, ['1', '2'])));
  c.soap12('routing/soap12/body-in-wrong-ns', PUSH, envelope(12, `<GetTokenDevice xmlns="http://example.org/"><id>dev-1001</id></GetTokenDevice>`));
  c.soap12('routing/soap12/ct-no-charset', PUSH, tokBody12, 'application/soap+xml');
  c.soap12('routing/soap12/with-soapaction-header', PUSH, tokBody12, CT12, { SOAPAction: action('GetTokenDevice') });
  c.soap12('routing/soap12/with-wrong-soapaction-header', PUSH, tokBody12, CT12, { SOAPAction: action('NoSuchOp') });
  c.soap11('routing/soap12/as-text-xml-with-action', PUSH, tokBody12, action('GetTokenDevice'));
  c.soap11('routing/soap12/as-text-xml-no-action', PUSH, tokBody12, null);
  c.soap11('routing/soap12/as-text-plain', PUSH, tokBody12, null, 'text/plain');
  c.soap11('routing/soap12/as-application-xml', PUSH, tokBody12, null, 'application/xml');
  c.soap11('routing/soap12/no-content-type', PUSH, tokBody12, null, null);

  // paths without regard to case (the legacy host is asked the canonical path)
  c.add({ name: 'routing/path-case/soap11', method: 'POST', path: '/pushnotificationmobile.ASMX', legacyPath: PUSH, headers: { 'Content-Type': CT11, SOAPAction: action('GetTokenDevice') }, body: tokBody11 });
  c.add({ name: 'routing/path-case/soap12', method: 'POST', path: '/PUSHNOTIFICATIONMOBILE.asmx', legacyPath: PUSH, headers: { 'Content-Type': CT12 }, body: tokBody12 });
  c.get('routing/path-case/get', '/pushnotificationmobile.asmx/GetTokenDevice?id=dev-1001', { legacyPath: `${PUSH}/GetTokenDevice?id=dev-1001` });
  c.add({ name: 'routing/path-case/post', method: 'POST', path: '/Pushnotificationmobile.Asmx/GetTokenDevice', legacyPath: `${PUSH}/GetTokenDevice`, headers: { 'Content-Type': FORM }, body: 'id=dev-1001' });

  // ---- lenient parsing
  const tokEl = (inner: string) => `<GetTokenDevice xmlns="${NS}">${inner}</GetTokenDevice>`;
  const schEl = (inner: string) => `<GetStudentSchool xmlns="${NS}">${inner}</GetStudentSchool>`;
  const lenient: Array<[string, string, string]> = [
    // [label, service path, op element]
    ['params-out-of-order', SCHOOL, schEl(`<show_active>49</show_active><school_base_url>${ALNOOR}</school_base_url>`)],
    ['unknown-element', SCHOOL, schEl(`<foo>bar</foo><school_base_url>${ALNOOR}</school_base_url><bar><baz/></bar><show_active>49</show_active><extra>1</extra>`)],
    ['unknown-element-other-ns', PUSH, tokEl(`<x:id xmlns:x="urn:x">dev-1002</x:id><id>dev-1001</id>`)],
    ['absent-show-active', SCHOOL, schEl(`<school_base_url>${ALNOOR}</school_base_url>`)],
    ['absent-all-school', SCHOOL, schEl('')],
    ['absent-id', PUSH, tokEl('')],
    ['self-closing-op', PUSH, `<GetTokenDevice xmlns="${NS}"/>`],
    ['comment-in-op', PUSH, tokEl('<!-- c --><id>dev-1001</id><!-- d -->')],
    ['comment-in-value', PUSH, tokEl('<id>dev-<!-- c -->1001</id>')],
    ['cdata', PUSH, tokEl('<id><![CDATA[dev-1001]]></id>')],
    ['cdata-partial', PUSH, tokEl('<id>dev-<![CDATA[10]]>01</id>')],
    ['cdata-specials', SCHOOL, schEl(`<school_base_url><![CDATA[${ALNOOR}]]></school_base_url><show_active><![CDATA[49]]></show_active>`)],
    ['char-refs', PUSH, tokEl('<id>&#x64;&#101;v-&#49;001</id>')],
    ['char-refs-arabic-url', SCHOOL, schEl(`<school_base_url>http://&#x645;&#x62F;&#x631;&#x633;&#x629;.example</school_base_url><show_active>&#52;9</show_active>`)],
    ['entity-refs', PUSH, tokEl('<id>dev&#45;1004</id>')],
    ['empty-id-element', PUSH, tokEl('<id></id>')],
    ['empty-id-self-closing', PUSH, tokEl('<id/>')],
    ['xsi-nil-id', PUSH, tokEl(`<id xsi:nil="true" />`)],
    ['xsi-nil-id-with-text', PUSH, tokEl(`<id xsi:nil="true">dev-1001</id>`)],
    ['xsi-nil-url', SCHOOL, schEl(`<school_base_url xsi:nil="true"/><show_active>49</show_active>`)],
    ['xsi-nil-show-active', SCHOOL, schEl(`<school_base_url>${ALNOOR}</school_base_url><show_active xsi:nil="true"/>`)],
    ['param-no-namespace', PUSH, tokEl('<id xmlns="">dev-1001</id>')],
    ['param-other-namespace', PUSH, tokEl('<id xmlns="urn:other">dev-1001</id>')],
    ['prefixed-op-and-params', PUSH, `<tns:GetTokenDevice xmlns:tns="${NS}"><tns:id>dev-1001</tns:id></tns:GetTokenDevice>`],
    ['prefixed-op-unprefixed-param', PUSH, `<tns:GetTokenDevice xmlns:tns="${NS}"><id>dev-1001</id></tns:GetTokenDevice>`],
    ['prefixed-school', SCHOOL, `<t:GetStudentSchool xmlns:t="${NS}"><t:school_base_url>${ALNOOR}</t:school_base_url><t:show_active>49</t:show_active></t:GetStudentSchool>`],
    ['duplicate-param', PUSH, tokEl('<id>dev-1001</id><id>dev-1002</id>')],
    ['nested-element-in-value', PUSH, tokEl('<id>dev-<b>1001</b></id>')],
    ['attribute-on-param', PUSH, tokEl('<id foo="bar">dev-1001</id>')],
    ['whitespace-around-params', SCHOOL, schEl(`\n\t <school_base_url>${ALNOOR}</school_base_url>\n  \n<show_active>49</show_active>\n`)],
    ['whitespace-in-value-multiline', PUSH, tokEl('<id>\n  dev-1001\n</id>')],
    ['second-body-child', PUSH, `${tokEl('<id>dev-1001</id>')}<GetServerKeyAndSender xmlns="${NS}"/>`],
    ['leading-comment-in-body', PUSH, `<!-- first -->${tokEl('<id>dev-1001</id>')}`],
  ];
  for (const [label, p, el] of lenient) {
    const opName = /<(?:\w+:)?(\w+)/.exec(el)![1];
    c.soap11(`lenient/soap11/${label}`, p, envelope(11, el), action(opName));
    c.soap12(`lenient/soap12/${label}`, p, envelope(12, el));
  }
  const tokOp = soapOp(token, ['dev-1001']);
  const envVariants: Array<[string, (v: 11 | 12) => string]> = [
    ['soap-header-empty', (v) => envelope(v, tokOp, { header: '<soap:Header />' })],
    ['soap-header-content', (v) => envelope(v, tokOp, { header: `<soap:Header><h:Auth xmlns:h="urn:h"><h:user>u</h:user></h:Auth></soap:Header>` })],
    ['soap-header-must-understand', (v) => envelope(v, tokOp, { header: `<soap:Header><h:Auth xmlns:h="urn:h" soap:mustUnderstand="${v === 11 ? '1' : 'true'}">x</h:Auth></soap:Header>` })],
    ['pretty-printed-lf', (v) => envelope(v, soapOp(token, ['dev-1001'], '\n'), { nl: '\n' })],
    ['pretty-printed-crlf', (v) => envelope(v, soapOp(token, ['dev-1001'], '\r\n'), { nl: '\r\n' })],
    ['no-xml-declaration', (v) => envelope(v, tokOp, { decl: '' })],
    ['declaration-no-encoding', (v) => envelope(v, tokOp, { decl: '<?xml version="1.0"?>' })],
    ['declaration-utf8-upper', (v) => envelope(v, tokOp, { decl: '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' })],
    ['declaration-iso-8859-1-ascii', (v) => envelope(v, tokOp, { decl: '<?xml version="1.0" encoding="iso-8859-1"?>' })],
    ['bom', (v) => `\uFEFF${envelope(v, tokOp)}`],
    ['bom-no-declaration', (v) => `\uFEFF${envelope(v, tokOp, { decl: '' })}`],
    ['leading-whitespace', (v) => `\n  ${envelope(v, tokOp, { decl: '' })}`],
    ['trailing-whitespace', (v) => `${envelope(v, tokOp)}\n\n  `],
    ['trailing-comment', (v) => `${envelope(v, tokOp)}<!-- end -->`],
    ['other-envelope-prefix', (v) => `${DECL}<s:Envelope xmlns:s="${v === 11 ? SOAP11 : SOAP12}"><s:Body>${tokOp}</s:Body></s:Envelope>`],
    ['default-ns-envelope', (v) => `${DECL}<Envelope xmlns="${v === 11 ? SOAP11 : SOAP12}"><Body>${tokOp}</Body></Envelope>`],
    ['envelope-attrs', (v) => `${DECL}<soap:Envelope xmlns:soap="${v === 11 ? SOAP11 : SOAP12}" foo="bar"><soap:Body id="b">${tokOp}</soap:Body></soap:Envelope>`],
    ['arabic-url-multiline', (v) => envelope(v, soapOp(school, [ARABIC_SCHOOL, '1'], '\n'), { nl: '\n' })],
  ];
  for (const [label, f] of envVariants) {
    const isSchool = label.includes('url');
    c.soap11(`lenient/soap11/${label}`, isSchool ? SCHOOL : PUSH, f(11), action(isSchool ? 'GetStudentSchool' : 'GetTokenDevice'));
    c.soap12(`lenient/soap12/${label}`, isSchool ? SCHOOL : PUSH, f(12));
  }
  c.add({
    name: 'lenient/soap11/latin1-bytes',
    method: 'POST',
    path: PUSH,
    headers: { 'Content-Type': 'text/xml; charset=iso-8859-1', SOAPAction: action('GetTokenDevice') },
    bodyBase64: Buffer.from(envelope(11, tokEl('<id>caf\u00e9</id>'), { decl: '<?xml version="1.0" encoding="iso-8859-1"?>' }), 'latin1').toString('base64'),
  });

  // ---- show_active over SOAP
  const showValues: Array<[string, string | null]> = [
    ['49', '49'],
    ['48', '48'],
    ['spaces-49', ' 49 '],
    ['newline-49', '\n49\n'],
    ['plus-49', '+49'],
    ['zero-padded', '0049'],
    ['minus-1', '-1'],
    ['0', '0'],
    ['1', '1'],
    ['65535', '65535'],
    ['65536', '65536'],
    ['99999999999', '99999999999'],
    ['empty', ''],
    ['absent', null],
    ['abc', 'abc'],
    ['4-space-9', '4 9'],
    ['hex', '0x31'],
    ['decimal', '49.0'],
    ['exponent', '1e1'],
    ['arabic-digits', '٤٩'],
    ['char-1', '1x'],
  ];
  for (const [label, v] of showValues) {
    for (const ver of [11, 12] as const) {
      const params: Params = [['school_base_url', ALNOOR], ['show_active', v]];
      c.soap11(`show_active/soap${ver}/${label}`, SCHOOL, envelope(ver, opElement(school, params)), ver === 11 ? action('GetStudentSchool') : null, ver === 11 ? CT11 : CT12);
      if (['absent', 'empty', '65536', 'abc', '4-space-9', 'minus-1', 'spaces-49', 'exponent'].includes(label)) {
        c.soap11(`show_active/soap${ver}/${label}-multiline`, SCHOOL, envelope(ver, opElement(school, params, { nl: '\n', indent: '    ' }), { nl: '\n' }), ver === 11 ? action('GetStudentSchool') : null, ver === 11 ? CT11 : CT12);
      }
    }
  }
  const badShow: Params = [['school_base_url', ARABIC_SCHOOL], ['show_active', 'abc']];
  c.soap11('show_active/soap11/abc-after-arabic-same-line', SCHOOL, envelope(11, opElement(school, badShow)), action('GetStudentSchool'));
  c.soap11('show_active/soap11/abc-crlf-multiline', SCHOOL, envelope(11, opElement(school, badShow, { nl: '\r\n', indent: '\t' }), { nl: '\r\n' }), action('GetStudentSchool'));
  c.soap11('show_active/soap11/abc-after-bom', SCHOOL, `\uFEFF${envelope(11, opElement(school, badShow))}`, action('GetStudentSchool'));
  c.soap11('show_active/soap11/abc-after-header', SCHOOL, envelope(11, opElement(school, badShow, { nl: '\n' }), { nl: '\n', header: '<soap:Header>\n  <!-- a\n comment -->\n</soap:Header>' }), action('GetStudentSchool'));
  c.soap11('show_active/soap11/abc-params-reversed', SCHOOL, envelope(11, schEl(`<show_active>abc</show_active>\n<school_base_url>${ALNOOR}</school_base_url>`)), action('GetStudentSchool'));
  c.soap11('show_active/soap11/abc-cdata', SCHOOL, envelope(11, schEl(`<school_base_url>x</school_base_url>\n  <show_active><![CDATA[abc]]></show_active>`)), action('GetStudentSchool'));
  c.soap11('show_active/soap11/abc-no-declaration', SCHOOL, envelope(11, opElement(school, badShow), { decl: '' }), action('GetStudentSchool'));
  c.soap11('show_active/soap11/abc-prefixed', SCHOOL, envelope(11, `<t:GetStudentSchool xmlns:t="${NS}">\n<t:school_base_url>x</t:school_base_url><t:show_active>abc</t:show_active></t:GetStudentSchool>`), action('GetStudentSchool'));
  c.soap11('show_active/soap11/49-and-abc-duplicate', SCHOOL, envelope(11, schEl('<show_active>49</show_active><show_active>abc</show_active>')), action('GetStudentSchool'));

  // ---- faults
  const malformed: Array<[string, string]> = [
    ['not-xml', 'this is not xml'],
    ['truncated', envelope(11, tokOp).slice(0, 180)],
    ['unclosed-root', '<a'],
    ['mismatched-tags', `${DECL}<soap:Envelope xmlns:soap="${SOAP11}"><soap:Body>${tokEl('<id>dev-1001</idx>')}</soap:Body></soap:Envelope>`],
    ['junk-after-root', `${envelope(11, tokOp)}<more/>`],
    ['unbound-prefix', `${DECL}<soap:Envelope xmlns:soap="${SOAP11}"><soap:Body><x:GetTokenDevice><x:id>1</x:id></x:GetTokenDevice></soap:Body></soap:Envelope>`],
    ['control-char-ref', envelope(11, tokEl('<id>dev&#1;</id>'))],
    ['undefined-entity', envelope(11, tokEl('<id>&nbsp;</id>'))],
    ['multiline-error', `${DECL}\n<soap:Envelope xmlns:soap="${SOAP11}">\n  <soap:Body>\n    <GetTokenDevice xmlns="${NS}">\n      <id>dev-1001</id x>\n    </GetTokenDevice>\n  </soap:Body>\n</soap:Envelope>`],
  ];
  for (const [label, body] of malformed) {
    c.soap11(`fault/soap11/malformed-${label}`, PUSH, body, action('GetTokenDevice'));
    c.soap11(`fault/no-action/malformed-${label}`, PUSH, body, null);
    c.soap12(`fault/soap12/malformed-${label}`, PUSH, body.replace(SOAP11, SOAP12));
  }
  c.add({ name: 'fault/soap11/invalid-utf8', method: 'POST', path: PUSH, headers: { 'Content-Type': CT11, SOAPAction: action('GetTokenDevice') }, bodyBase64: Buffer.concat([Buffer.from(envelope(11, tokEl('<id>dev-')).replace(/<\/soap:Body>.*$/, '')), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(`</id></GetTokenDevice></soap:Body></soap:Envelope>`)]).toString('base64') });
  for (const [label, body11, body12] of [
    ['empty-body', '', ''],
    ['whitespace-body', '  \n', '  \n'],
  ] as const) {
    c.soap11(`fault/soap11/${label}`, PUSH, body11, action('GetTokenDevice'));
    c.soap11(`fault/no-action/${label}`, PUSH, body11, null);
    c.soap12(`fault/soap12/${label}`, PUSH, body12);
  }
  const doctype = (v: 11 | 12) => `${DECL}<!DOCTYPE soap:Envelope [<!ELEMENT soap:Envelope ANY>]>${envelope(v, tokOp, { decl: '' })}`;
  const laughs = (v: 11 | 12) =>
    `${DECL}<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>` +
    envelope(v, tokEl('<id>&lol3;</id>'), { decl: '' });
  const xxe = (v: 11 | 12) => `${DECL}<!DOCTYPE foo [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>${envelope(v, tokEl('<id>&xxe;</id>'), { decl: '' })}`;
  const xxeParam = (v: 11 | 12) => `${DECL}<!DOCTYPE foo [<!ENTITY % p SYSTEM "http://127.0.0.1:9/x.dtd"> %p;]>${envelope(v, tokOp, { decl: '' })}`;
  const structural: Array<[string, (v: 11 | 12) => string]> = [
    ['doctype', doctype],
    ['entity-expansion', laughs],
    ['external-entity', xxe],
    ['external-parameter-entity', xxeParam],
    ['root-not-envelope', () => `${DECL}${tokOp}`],
    ['root-envelope-wrong-ns', () => `${DECL}<soap:Envelope xmlns:soap="urn:not-soap"><soap:Body>${tokOp}</soap:Body></soap:Envelope>`],
    ['envelope-without-body', (v) => `${DECL}<soap:Envelope xmlns:soap="${v === 11 ? SOAP11 : SOAP12}"></soap:Envelope>`],
    ['envelope-only-header', (v) => `${DECL}<soap:Envelope xmlns:soap="${v === 11 ? SOAP11 : SOAP12}"><soap:Header/></soap:Envelope>`],
    ['empty-body-element', (v) => `${DECL}<soap:Envelope xmlns:soap="${v === 11 ? SOAP11 : SOAP12}"><soap:Body /></soap:Envelope>`],
    ['empty-body-element-whitespace', (v) => `${DECL}<soap:Envelope xmlns:soap="${v === 11 ? SOAP11 : SOAP12}"><soap:Body>\n  </soap:Body></soap:Envelope>`],
    ['body-outside-envelope-ns', (v) => `${DECL}<soap:Envelope xmlns:soap="${v === 11 ? SOAP11 : SOAP12}"><Body>${tokOp}</Body></soap:Envelope>`],
    ['body-text-only', (v) => `${DECL}<soap:Envelope xmlns:soap="${v === 11 ? SOAP11 : SOAP12}"><soap:Body>hello</soap:Body></soap:Envelope>`],
  ];
  for (const [label, f] of structural) {
    c.soap11(`fault/soap11/${label}`, PUSH, f(11), action('GetTokenDevice'));
    c.soap11(`fault/no-action/${label}`, PUSH, f(11), null);
    c.soap12(`fault/soap12/${label}`, PUSH, f(12));
  }
  c.soap11('fault/soap11/envelope-mismatch-soap11-action-12-env', SCHOOL, envelope(12, soapOp(school, [ALNOOR, '1'])), action('GetStudentSchool'));

  // ---- HTTP GET / POST
  const A = `${servicePath(auth)}/AuthCode`;
  const S = `${SCHOOL}/GetStudentSchool`;
  const T = `${PUSH}/GetTokenDevice`;
  const httpCases: Array<[string, string, string]> = [
    // [label, path-and-query for GET, form body for POST (same pairs)]
    ['auth-missing-phone', A, 'code=1'],
    ['auth-missing-both', A, ''],
    ['auth-empty-values', A, 'code=&phone='],
    ['auth-name-only', A, 'code&phone'],
    ['auth-extra-params', A, 'code=1&phone=2&extra=3&x='],
    ['auth-name-case', A, 'CODE=1&Phone=2'],
    ['auth-repeated', A, 'code=1&code=2&phone=3'],
    ['token-repeated', T, 'id=dev-1001&id=dev-1002'],
    ['token-repeated-empty', T, 'id=&id=dev-1001'],
    ['token-name-case', T, 'ID=dev-1001'],
    ['token-plus-space', T, 'id=dev+1001'],
    ['token-encoded-plus', T, 'id=dev%2B1001'],
    ['token-encoded-dash', T, 'id=dev%2d1001'],
    ['token-bad-percent', T, 'id=dev%zz1001'],
    ['token-specials-encoded', T, `id=${encodeURIComponent('dev-1004')}&z=${encodeURIComponent('<&>')}`],
    ['token-lt-space', T, `id=${encodeURIComponent('a < b')}`],
    ['token-lt-letter', T, `id=${encodeURIComponent('<b')}`],
    ['token-amp-hash', T, `id=${encodeURIComponent('&#65;')}`],
    ['token-lt-in-name', T, `id=dev-1001&${encodeURIComponent('<x')}=1`],
    ['token-arabic-id-encoded', T, `id=${encodeURIComponent('جهاز')}`],
    ['token-missing', T, 'other=dev-1001'],
    ['token-empty', T, 'id='],
    ['school-missing-show', S, `school_base_url=${encodeURIComponent(ALNOOR)}`],
    ['school-missing-url', S, 'show_active=1'],
    ['school-show-empty', S, `school_base_url=${encodeURIComponent(ALNOOR)}&show_active=`],
    ['school-show-12', S, `school_base_url=${encodeURIComponent(ALNOOR)}&show_active=12`],
    ['school-show-ab', S, `school_base_url=${encodeURIComponent(ALNOOR)}&show_active=ab`],
    ['school-show-49', S, `school_base_url=${encodeURIComponent(ALNOOR)}&show_active=49`],
    ['school-show-space', S, `school_base_url=${encodeURIComponent(ALNOOR)}&show_active=+`],
    ['school-show-arabic-2chars', S, `school_base_url=${encodeURIComponent(ALNOOR)}&show_active=${encodeURIComponent('نن')}`],
    ['school-show-repeated', S, `school_base_url=${encodeURIComponent(ALNOOR)}&show_active=1&show_active=0`],
    ['school-show-emoji', S, `school_base_url=${encodeURIComponent(ALNOOR)}&show_active=${encodeURIComponent('😀')}`],
    ['school-arabic-url-encoded', S, `school_base_url=${encodeURIComponent(ARABIC_SCHOOL)}&show_active=1`],
    ['school-url-unencoded-colon', S, `school_base_url=http://alnoor.school.example&show_active=1`],
    ['school-name-case', S, `SCHOOL_BASE_URL=${encodeURIComponent(ALNOOR)}&SHOW_ACTIVE=1`],
    ['about-extra-params', `${servicePath(about)}/GetAboutUs`, 'a=1'],
  ];
  for (const [label, p, q] of httpCases) {
    c.get(`http-get/${label}`, q ? `${p}?${q}` : p);
    c.post(`http-post/${label}`, p, q);
  }
  c.get('http-get/query-just-question-mark', `${A}?`);
  c.get('http-get/method-wrong-case', `${servicePath(auth)}/authcode?code=1&phone=2`);
  c.get('http-get/method-upper-case', `${PUSH}/GETTOKENDEVICE?id=dev-1001`);
  c.get('http-get/method-unknown', `${servicePath(auth)}/NoSuchOp?code=1`);
  c.get('http-get/method-of-other-service', `${servicePath(about)}/GetTokenDevice?id=dev-1001`);
  c.get('http-get/method-empty', `${servicePath(auth)}/`, { kind: 'error' });
  c.get('http-get/method-trailing-slash', `${T}/?id=dev-1001`);
  c.get('http-get/arabic-school-raw-percent-lower', `${S}?school_base_url=${encodeURIComponent(ARABIC_SCHOOL).toLowerCase()}&show_active=1`);
  c.post('http-post/method-wrong-case', `${PUSH}/gettokendevice`, 'id=dev-1001');
  c.post('http-post/method-unknown', `${PUSH}/NoSuchOp`, 'id=dev-1001');
  c.post('http-post/query-params-only', `${T}?id=dev-1001`, '');
  c.post('http-post/query-and-form', `${T}?id=dev-1002`, 'id=dev-1001');
  c.post('http-post/charset-utf8', T, 'id=dev-1001', `${FORM}; charset=utf-8`);
  c.post('http-post/charset-utf8-arabic', S, `school_base_url=${encodeURIComponent(ARABIC_SCHOOL)}&show_active=1`, `${FORM}; charset=utf-8`);
  c.post('http-post/charset-iso-8859-1', T, 'id=dev-1001', `${FORM}; charset=iso-8859-1`);
  c.post('http-post/ct-upper-case', T, 'id=dev-1001', 'APPLICATION/X-WWW-FORM-URLENCODED');
  c.post('http-post/ct-text-plain', T, 'id=dev-1001', 'text/plain');
  c.post('http-post/ct-json', T, '{"id":"dev-1001"}', 'application/json');
  c.post('http-post/ct-text-xml', T, 'id=dev-1001', CT11);
  c.post('http-post/ct-multipart', T, '--b\r\nContent-Disposition: form-data; name="id"\r\n\r\ndev-1001\r\n--b--\r\n', 'multipart/form-data; boundary=b');
  c.post('http-post/ct-none', T, 'id=dev-1001', null);
  c.post('http-post/ct-none-empty-body', `${servicePath(about)}/GetAboutUs`, '', null);
  c.post('http-post/ct-text-plain-no-params', `${servicePath(about)}/GetAboutUs`, '', 'text/plain');
  c.post('http-post/raw-arabic-form', S, `school_base_url=${ARABIC_SCHOOL}&show_active=1`);
  c.post('http-post/trailing-ampersand', T, 'id=dev-1001&');
  c.post('http-post/newline-in-form', T, 'id=dev-1001\r\n');

  // ---- service pages
  for (const s of SERVICES) {
    const p = `/${s}.asmx`;
    for (const q of ['wsdl', 'WSDL', 'Wsdl', 'disco', 'DISCO']) c.get(`pages/${s}/${q}`, `${p}?${q}`, { kind: 'page' });
    c.get(`pages/${s}/wsdl-path-case`, `${p.toLowerCase()}?wsdl`, { kind: 'page', legacyPath: `${p}?wsdl` });
    c.get(`pages/${s}/help`, p, { kind: 'help' });
    for (const o of OPS.filter((x) => x.service === s)) c.get(`pages/${s}/help-op-${o.name}`, `${p}?op=${o.name}`, { kind: 'help' });
    c.get(`pages/${s}/help-op-unknown`, `${p}?op=NoSuchOp`, { kind: 'help' });
  }
  c.get('pages/help-other-query', `/AboutUs.asmx?foo=bar`, { kind: 'help' });
  addFidelityCases(c);
  return c.cases;
}

const bytes = (text: string, encoding: string) => iconv.encode(text, encoding, { addBOM: false });
const base64 = (...parts: Buffer[]) => Buffer.concat(parts).toString('base64');
const BOM16LE = Buffer.from([0xff, 0xfe]);
const BOM16BE = Buffer.from([0xfe, 0xff]);
/** %-escapes of every byte of `text` in `encoding`. */
const escapedBytes = (text: string, encoding: string) => [...bytes(text, encoding)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');

/**
 * The request-reading rules of issue 12: the request's character encoding (SOAP, forms, query
 * strings), HEAD and other methods, an empty operation name, URL-decoded SOAPAction values, XML
 * error positions, and framing for HTTP/1.0 clients.
 */
function addFidelityCases(c: Corpus): void {
  const school = op('GetStudentSchool');
  const token = op('GetTokenDevice');
  const SCHOOL = servicePath(school);
  const PUSH = servicePath(token);
  const S = `${SCHOOL}/GetStudentSchool`;
  const T = `${PUSH}/GetTokenDevice`;
  const schoolAction = action('GetStudentSchool');
  // The Arabic school's students are found only when the request's text was decoded right.
  const arabic = (v: 11 | 12, decl = DECL) => envelope(v, soapOp(school, [ARABIC_SCHOOL, '1']), { decl });
  const badChar = (v: 11 | 12, decl = DECL) => envelope(v, opElement(school, [['school_base_url', ARABIC_SCHOOL], ['show_active', 'abc']]), { decl });
  const raw = (name: string, headers: Record<string, string>, body: Buffer, path = SCHOOL) => c.add({ name, method: 'POST', path, headers, bodyBase64: body.toString('base64') });
  const soap11Headers = (contentType: string) => ({ 'Content-Type': contentType, SOAPAction: schoolAction });
  const soap12Headers = (contentType: string) => ({ 'Content-Type': contentType });

  // ---- SOAP: charset, else byte-order mark, else (application/*) the XML declaration, else the media type's default
  const decl16 = '<?xml version="1.0" encoding="utf-16"?>';
  const decl1256 = '<?xml version="1.0" encoding="windows-1256"?>';
  raw('encoding/soap11/utf16le-bom-no-charset', soap11Headers('text/xml'), Buffer.concat([BOM16LE, bytes(arabic(11, decl16), 'utf-16le')]));
  raw('encoding/soap11/utf16be-bom-no-charset', soap11Headers('text/xml'), Buffer.concat([BOM16BE, bytes(arabic(11, decl16), 'utf-16be')]));
  raw('encoding/soap11/utf16le-bom-charset-utf8', soap11Headers(CT11), Buffer.concat([BOM16LE, bytes(arabic(11, decl16), 'utf-16le')]));
  raw('encoding/soap11/utf16le-bom-bad-char-position', soap11Headers('text/xml'), Buffer.concat([BOM16LE, bytes(badChar(11, decl16), 'utf-16le')]));
  raw('encoding/soap12/utf16le-bom-no-charset', soap12Headers('application/soap+xml'), Buffer.concat([BOM16LE, bytes(arabic(12, decl16), 'utf-16le')]));
  raw('encoding/soap12/utf16be-bom-no-charset', soap12Headers('application/soap+xml'), Buffer.concat([BOM16BE, bytes(arabic(12, decl16), 'utf-16be')]));
  raw('encoding/soap12/utf16le-unmarked-no-charset', soap12Headers('application/soap+xml'), bytes(arabic(12, decl16), 'utf-16le'));
  raw('encoding/soap12/utf16-declared-without-bom', soap12Headers('application/soap+xml'), bytes(arabic(12, decl16), 'utf8'));
  raw('encoding/soap12/windows-1256-declaration', soap12Headers('application/soap+xml'), bytes(arabic(12, decl1256), 'windows-1256'));
  raw('encoding/soap12/windows-1256-declaration-bad-char', soap12Headers('application/soap+xml'), bytes(badChar(12, decl1256), 'windows-1256'));
  raw('encoding/soap12/windows-1256-declaration-charset-utf8', soap12Headers(CT12), bytes(arabic(12, decl1256), 'windows-1256'));
  raw('encoding/soap11/windows-1256-declaration-text-xml', soap11Headers('text/xml'), bytes(arabic(11, decl1256), 'windows-1256'));
  raw('encoding/soap11/windows-1256-charset', soap11Headers('text/xml; charset=windows-1256'), bytes(arabic(11, decl1256), 'windows-1256'));
  raw('encoding/soap11/iso-8859-6-charset', soap11Headers('text/xml; charset=ISO-8859-6'), bytes(arabic(11, ''), 'iso-8859-6'));
  raw('encoding/soap11/utf8-text-xml-no-charset', soap11Headers('text/xml'), bytes(arabic(11), 'utf8'));
  raw('encoding/soap11/utf8-text-xml-no-charset-bad-char', soap11Headers('text/xml'), bytes(badChar(11), 'utf8'));
  raw('encoding/soap12/utf8-no-charset', soap12Headers('application/soap+xml'), bytes(arabic(12), 'utf8'));
  raw('encoding/soap12/utf8-no-charset-no-declaration', soap12Headers('application/soap+xml'), bytes(arabic(12, ''), 'utf8'));
  // encodings Node's TextDecoder lacks, and names no one knows
  raw('encoding/soap12/utf-32-charset', soap12Headers('application/soap+xml; charset=utf-32'), bytes(arabic(12, ''), 'utf-32le'));
  raw('encoding/soap11/utf-32-bom-no-charset', soap11Headers('text/xml'), Buffer.concat([Buffer.from([0xff, 0xfe, 0, 0]), bytes(arabic(11, ''), 'utf-32le')]));
  raw('encoding/soap12/utf-7-charset', soap12Headers('application/soap+xml; charset=utf-7'), bytes(arabic(12, ''), 'utf-7'));
  raw('encoding/soap11/unknown-charset', soap11Headers('text/xml; charset=x-no-such-charset'), bytes(arabic(11), 'utf8'));
  raw('encoding/soap12/unknown-charset', soap12Headers('application/soap+xml; charset=x-no-such-charset'), bytes(arabic(12), 'utf8'));
  raw('encoding/soap12/unknown-declared-encoding', soap12Headers('application/soap+xml'), bytes(arabic(12, '<?xml version="1.0" encoding="x-no-such-charset"?>'), 'utf8'));
  raw('encoding/soap12/unknown-declared-encoding-multiline', soap12Headers('application/soap+xml'), bytes(arabic(12, '<?xml version="1.0"\n    encoding="x-klingon"?>'), 'utf8'));
  raw('encoding/soap11/unknown-declared-encoding-text-xml', soap11Headers('text/xml'), bytes(arabic(11, '<?xml version="1.0" encoding="x-no-such-charset"?>'), 'utf8'));
  raw('encoding/no-action/unknown-declared-encoding', { 'Content-Type': 'text/xml' }, bytes(arabic(11, '<?xml version="1.0" encoding="x-no-such-charset"?>'), 'utf8'));

  // ---- forms and query strings: the charset the request names
  const url1256 = escapedBytes(ARABIC_SCHOOL, 'windows-1256');
  const form1256 = `school_base_url=${url1256}&show_active=1`;
  c.post('encoding/post/windows-1256-escaped', S, form1256, `${FORM}; charset=windows-1256`);
  raw('encoding/post/windows-1256-raw-bytes', { 'Content-Type': `${FORM}; charset=windows-1256` }, bytes(`school_base_url=${ARABIC_SCHOOL}&show_active=1`, 'windows-1256'), S);
  raw('encoding/post/iso-8859-6-raw-bytes', { 'Content-Type': `${FORM}; charset=iso-8859-6` }, bytes(`school_base_url=${ARABIC_SCHOOL}&show_active=1`, 'iso-8859-6'), S);
  c.post('encoding/post/windows-1256-escaped-no-charset', S, form1256);
  c.post('encoding/post/unknown-charset', S, `school_base_url=${encodeURIComponent(ARABIC_SCHOOL)}&show_active=1`, `${FORM}; charset=x-no-such-charset`);
  c.post('encoding/post/percent-u-escape', T, 'id=dev%u002D1001');
  c.post('encoding/post/invalid-utf8-escape', T, 'id=dev-1001%FF');
  c.add({ name: 'encoding/get/windows-1256-query-body-charset', method: 'GET', path: `${S}?${form1256}`, headers: { 'Content-Type': 'text/plain; charset=windows-1256' }, body: 'x' });
  c.get('encoding/get/windows-1256-query-no-charset', `${S}?${form1256}`);
  c.get('encoding/get/invalid-utf8-escape', `${T}?id=dev-1001%FF`);

  // ---- HEAD is not GET, and no other method is served
  for (const method of ['HEAD', 'PUT', 'DELETE', 'OPTIONS']) {
    const body = method === 'HEAD' ? {} : { body: '' };
    c.add({ name: `methods/${method.toLowerCase()}-service-page`, method, path: '/AboutUs.asmx', headers: {}, kind: 'error', ...body });
    c.add({ name: `methods/${method.toLowerCase()}-operation`, method, path: `${T}?id=dev-1001`, headers: {}, kind: 'error', ...body });
  }
  c.add({ name: 'methods/head-wsdl', method: 'HEAD', path: '/AboutUs.asmx?wsdl', headers: {}, kind: 'error' });
  c.add({ name: 'methods/head-empty-operation', method: 'HEAD', path: `${PUSH}/`, headers: {}, kind: 'error' });
  c.get('methods/get-empty-operation-with-query', `${PUSH}/?id=dev-1001`, { kind: 'error' });
  c.add({ name: 'methods/post-empty-operation', method: 'POST', path: `${PUSH}/`, headers: { 'Content-Type': FORM }, body: 'id=dev-1001', kind: 'error' });

  // ---- SOAPAction (and SOAP 1.2's action) are URL-decoded before they are matched
  const tokBody11 = envelope(11, soapOp(token, ['dev-1001']));
  const escapedActions: Array<[string, string]> = [
    ['percent-letter', `"${NS}Get%54okenDevice"`],
    ['percent-lower-hex', `"${NS}Get%74okenDevice"`],
    ['percent-all', `"${encodeURIComponent(`${NS}GetTokenDevice`)}"`],
    ['percent-u', `"${NS}Get%u0054okenDevice"`],
    ['plus', `"${NS}GetTokenDevice+"`],
    ['percent-broken', `"${NS}GetTokenDevice%zz"`],
    ['percent-invalid-utf8', `"${NS}GetTokenDevice%FF"`],
    ['percent-arabic', `"${NS}${encodeURIComponent('جهاز')}"`],
    ['percent-quote-inside', `%22${NS}GetTokenDevice%22`],
  ];
  for (const [label, a] of escapedActions) c.soap11(`routing/soap11/action-${label}`, PUSH, tokBody11, a);
  const unknownBody12 = envelope(12, opElement('NoSuchOp', [['id', 'dev-1001']]));
  c.soap12('routing/soap12/action-percent-escaped', PUSH, unknownBody12, `application/soap+xml; charset=utf-8; action="${NS}Get%54okenDevice"`);
  c.soap12('routing/soap12/action-percent-unknown', PUSH, unknownBody12, `application/soap+xml; charset=utf-8; action="${NS}No%53uchOp"`);

  // ---- where the XML reader reports an error
  const positions: Array<[string, string]> = [
    ['not-xml-after-blank-lines', '\n\n   not xml'],
    ['not-xml-after-declaration', `${DECL}\nnot xml`],
    ['unbound-prefix-multiline', `${DECL}\n<soap:Envelope xmlns:soap="${SOAP12}">\n  <soap:Body>\n    <x:GetTokenDevice/>\n  </soap:Body>\n</soap:Envelope>`],
    ['unclosed-literal-multiline', `${DECL}\n<soap:Envelope xmlns:soap="${SOAP12}">\n  <soap:Body a="1`],
  ];
  for (const [label, body] of positions) c.soap12(`fault/soap12/position-${label}`, PUSH, body);

  // ---- HTTP/1.0 clients (nginx's default towards its upstream) get a Content-Length, never chunks
  const http10 = (name: string, method: string, path: string, headers: Record<string, string>, body?: string, kind: CaseKind = 'full') =>
    c.add({ name: `framing/http10/${name}`, method, path, headers, body, kind, httpVersion: '1.0' });
  http10('soap11', 'POST', PUSH, { 'Content-Type': CT11, SOAPAction: action('GetTokenDevice') }, tokBody11);
  http10('soap12-students', 'POST', SCHOOL, { 'Content-Type': CT12 }, envelope(12, soapOp(school, [ALNOOR, '1'])));
  http10('soap11-fault', 'POST', PUSH, { 'Content-Type': CT11, SOAPAction: action('NoSuchOp') }, tokBody11);
  http10('soap11-malformed', 'POST', PUSH, { 'Content-Type': CT11, SOAPAction: action('GetTokenDevice') }, '<a');
  http10('get-students', 'GET', `${S}?school_base_url=${encodeURIComponent(ALNOOR)}&show_active=1`, {});
  http10('get-void', 'GET', '/AboutUs.asmx/GetAboutUs', {});
  http10('get-error', 'GET', `${T}?other=1`, {});
  http10('post-token', 'POST', T, { 'Content-Type': FORM }, 'id=dev-1001');
  http10('wsdl', 'GET', '/AboutUs.asmx?wsdl', {}, undefined, 'page');
  http10('empty-operation', 'GET', `${PUSH}/`, {}, undefined, 'error');
  http10('delete-service-page', 'DELETE', '/AboutUs.asmx', {}, '', 'error');
}

/**
 * Requests to a service whose namespace has no trailing slash (`--namespace urn:school:v1`): .NET
 * builds each SOAPAction as the namespace, a `/` and the operation name, in the WSDL and in routing.
 */
export function buildNamespaceCorpus(ns: string): Case[] {
  const c = new Corpus();
  const PUSH = '/PushNotificationMobile.asmx';
  const env = (v: 11 | 12, inner: string) => envelope(v, inner);
  const tok = `<GetTokenDevice xmlns="${ns}"><id>dev-1001</id></GetTokenDevice>`;
  const key = `<GetServerKeyAndSender xmlns="${ns}" />`;
  const withSlash = `${ns}/GetTokenDevice`;
  c.soap11('namespace/soap11/action-with-slash', PUSH, env(11, tok), `"${withSlash}"`);
  c.soap11('namespace/soap11/action-without-slash', PUSH, env(11, tok), `"${ns}GetTokenDevice"`);
  c.soap11('namespace/soap11/action-escaped-slash', PUSH, env(11, tok), `"${ns}%2FGetTokenDevice"`);
  c.soap11('namespace/soap11/other-operation', PUSH, env(11, key), `"${ns}/GetServerKeyAndSender"`);
  c.soap11('namespace/soap11/no-action-body-routed', PUSH, env(11, tok), null);
  c.soap12('namespace/soap12/action-with-slash', PUSH, env(12, tok), `application/soap+xml; charset=utf-8; action="${withSlash}"`);
  c.soap12('namespace/soap12/action-without-slash-body-known', PUSH, env(12, tok), `application/soap+xml; charset=utf-8; action="${ns}GetTokenDevice"`);
  c.soap12('namespace/soap12/action-with-slash-body-other', PUSH, env(12, `<NoSuchOp xmlns="${ns}" />`), `application/soap+xml; charset=utf-8; action="${withSlash}"`);
  c.soap12('namespace/soap12/no-action', PUSH, env(12, tok));
  c.get('namespace/get', `${PUSH}/GetTokenDevice?id=dev-1001`);
  for (const s of SERVICES) {
    c.get(`namespace/pages/${s}/wsdl`, `/${s}.asmx?wsdl`, { kind: 'page' });
    c.get(`namespace/pages/${s}/disco`, `/${s}.asmx?disco`, { kind: 'page' });
  }
  return c.cases;
}

// ---------------------------------------------------------------------------------------------------
// Asking a server


export function ask(base: string, c: Case, legacy: boolean, timeoutMs = 30000): Promise<Answer> {
  const url = new URL(base);
  const p = (url.pathname.replace(/\/$/, '') + ((legacy && c.legacyPath) || c.path)) || '/';
  const body = c.bodyBase64 !== undefined ? Buffer.from(c.bodyBase64, 'base64') : c.body !== undefined ? Buffer.from(c.body, 'utf8') : null;
  const headers: Record<string, string> = { ...c.headers };
  if (body !== null || c.method === 'POST') headers['Content-Length'] = String(body?.length ?? 0);
  if (c.httpVersion === '1.0') return askHttp10(url, p, c.method, headers, body, timeoutMs);
  return new Promise((resolve) => {
    const req = http.request(
      { hostname: url.hostname, port: url.port || 80, method: c.method, path: p, headers, agent: false, timeout: timeoutMs },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => {
          const h: Record<string, string | undefined> = {};
          for (const k of ANSWER_HEADERS) {
            const v = res.headers[k];
            h[k] = Array.isArray(v) ? v.join(', ') : v;
          }
          resolve({ status: res.statusCode ?? 0, headers: h, body: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', (e) => resolve({ status: 0, headers: {}, body: '', error: String(e) }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => resolve({ status: 0, headers: {}, body: '', error: String(e.message) }));
    if (body !== null) req.write(body);
    req.end();
  });
}

/** One HTTP/1.0 exchange over a plain socket (Node's client speaks only 1.1); the server closes. */
function askHttp10(url: URL, p: string, method: string, headers: Record<string, string>, body: Buffer | null, timeoutMs: number): Promise<Answer> {
  return new Promise((resolve) => {
    const socket = net.connect(Number(url.port || 80), url.hostname);
    const chunks: Buffer[] = [];
    let failed: string | undefined;
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error('timeout')));
    socket.on('connect', () => {
      const head = [`${method} ${p} HTTP/1.0`, `Host: ${url.host}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
      socket.write(`${head.join('\r\n')}\r\n\r\n`);
      if (body !== null) socket.write(body);
    });
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', (e) => (failed = e.message));
    socket.on('close', () => {
      const raw = Buffer.concat(chunks);
      const end = raw.indexOf('\r\n\r\n');
      if (failed !== undefined || end === -1) return resolve({ status: 0, headers: {}, body: '', error: failed ?? 'no answer' });
      const [statusLine, ...lines] = raw.subarray(0, end).toString('latin1').split('\r\n');
      const h: Record<string, string | undefined> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim().toLowerCase();
        if ((ANSWER_HEADERS as readonly string[]).includes(name)) h[name] = line.slice(colon + 1).trim();
      }
      let rest: Buffer = raw.subarray(end + 4);
      if (h['transfer-encoding'] === 'chunked') rest = dechunk(rest);
      resolve({ status: Number(statusLine.split(' ')[1]), headers: h, body: method === 'HEAD' ? '' : rest.toString('utf8') });
    });
  });
}

function dechunk(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at);
    const size = lineEnd === -1 ? 0 : parseInt(data.toString('latin1', at, lineEnd), 16);
    if (!(size > 0)) return Buffer.concat(parts);
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}

// ---------------------------------------------------------------------------------------------------
// Running

interface Recorded extends Case {
  legacy: { status: number; headers: { 'content-type'?: string; 'cache-control'?: string; 'content-length'?: string }; body: string };
}

async function mapLimit<T, R>(items: T[], limit: number, f: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await f(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

async function main(argv: string[]): Promise<number> {
  const positional: string[] = [];
  const only: string[] = [];
  let record = false;
  let verbose = false;
  let out = path.join(__dirname, '..', 'test', 'fixtures', 'corpus.json');
  let concurrency = 4;
  let from: string | null = null;
  let namespace: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--only') only.push(argv[++i]);
    else if (a === '--record') record = true;
    else if (a === '--verbose') verbose = true;
    else if (a === '--out') out = argv[++i];
    else if (a === '--from') from = argv[++i];
    else if (a === '--namespace') namespace = argv[++i];
    else if (a === '--concurrency') concurrency = Number(argv[++i]);
    else if (a === '--list') positional.push('--list');
    else if (a.startsWith('--')) {
      process.stderr.write(`unknown option ${a}\n`);
      return 2;
    } else positional.push(a);
  }
  if (namespace !== null && !argv.includes('--out')) out = path.join(__dirname, '..', 'test', 'fixtures', 'corpus-namespace.json');
  const all = namespace === null ? buildCorpus() : buildNamespaceCorpus(namespace);
  const cases = all.filter((c) => only.length === 0 || only.some((s) => c.name.includes(s)));
  if (positional[0] === '--list') {
    for (const c of cases) process.stdout.write(`${c.name}\n`);
    return 0;
  }
  let legacyUrl: string | undefined;
  let oursUrl: string | undefined;
  let recorded: Map<string, Recorded> | null = null;
  if (from) {
    if (record) {
      process.stderr.write('--record needs a live legacy host, not --from\n');
      return 2;
    }
    const doc = JSON.parse(fs.readFileSync(from, 'utf8')) as { cases: Recorded[] };
    recorded = new Map(doc.cases.map((r) => [r.name, r]));
    [oursUrl] = positional;
  } else {
    [legacyUrl, oursUrl] = positional;
  }
  if ((!legacyUrl && !recorded) || (!oursUrl && !record)) {
    process.stderr.write(
      'usage: compare-legacy.ts LEGACY_URL OURS_URL [--only SUBSTRING]... [--verbose]\n' +
        '       compare-legacy.ts LEGACY_URL [OURS_URL] --record [--out FILE]\n' +
        '       compare-legacy.ts --from test/fixtures/corpus.json OURS_URL [--only SUBSTRING]...\n',
    );
    return 2;
  }
  // with --from, the recorded cases are replayed (as recorded, even if this script's corpus has changed since)
  const toRun = recorded ? [...recorded.values()].filter((c) => only.length === 0 || only.some((x) => c.name.includes(x))) : cases;
  const results = await mapLimit(toRun, concurrency, async (c) => {
    const rec = recorded?.get(c.name);
    const [legacy, ours] = await Promise.all([
      rec ? Promise.resolve<Answer>({ status: rec.legacy.status, headers: { ...rec.legacy.headers }, body: rec.legacy.body }) : ask(legacyUrl!, c, true),
      oursUrl ? ask(oursUrl, c, false) : Promise.resolve(null),
    ]);
    // service pages: each server's own base URL (and the path it was asked) as a placeholder
    if (c.kind === 'page' && !rec) legacy.body = placeholdBase(legacy.body, legacyUrl!, c.legacyPath ?? c.path);
    if (c.kind === 'page' && ours) ours.body = placeholdBase(ours.body, oursUrl!, c.path);
    return { c, legacy, ours };
  });

  if (record) {
    // With --only, the other recorded cases are kept as they are, in corpus order.
    const kept = only.length > 0 && fs.existsSync(out) ? (JSON.parse(fs.readFileSync(out, 'utf8')) as { cases: Recorded[] }).cases : [];
    const fresh = new Map(
      results.map(({ c, legacy }) => [
        c.name,
        {
          ...c,
          legacy: {
            status: legacy.status,
            headers: {
              'content-type': legacy.headers['content-type'],
              'cache-control': legacy.headers['cache-control'],
              'content-length': legacy.headers['content-length'],
            },
            body: legacy.body,
          },
        } as Recorded,
      ]),
    );
    const previous = new Map(kept.map((r) => [r.name, r]));
    const recordedCases = all.flatMap((c) => fresh.get(c.name) ?? previous.get(c.name) ?? []);
    const doc = {
      description:
        'Requests put to the legacy ASMX host (Mono System.Web.Services) and its answers, recorded by scripts/compare-legacy.ts --record. ' +
        'Replay: send method/path/headers/body (bodyBase64: raw bytes) to ours, then compareAnswers(kind, legacy, ours) from that script; ' +
        `in "page" cases the legacy base URL and requested path are written ${BASE_PLACEHOLDER}{PATH}, so pass ours through placeholdBase() first. ` +
        'legacyPath (when given) is what the case-sensitive legacy host was asked instead of path. ' +
        'content-length is recorded for its presence only (the legacy host writes LF where .NET writes CRLF).',
      namespace: namespace ?? NS,
      count: recordedCases.length,
      cases: recordedCases,
    };
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, `${JSON.stringify(doc, null, 1)}\n`);
    process.stdout.write(`recorded ${results.length} cases to ${out}\n`);
    for (const r of results.filter((x) => x.legacy.error)) process.stdout.write(`  legacy did not answer ${r.c.name}: ${r.legacy.error}\n`);
  }
  if (!oursUrl) return 0;

  let differ = 0;
  for (const { c, legacy, ours } of results) {
    const diffs = compareAnswers(c.kind, legacy, ours!);
    if (diffs.length === 0) continue;
    differ++;
    const soapAction = c.headers.SOAPAction !== undefined ? ` SOAPAction: ${c.headers.SOAPAction}` : '';
    const type = c.headers['Content-Type'] !== undefined ? ` (${c.headers['Content-Type']})` : '';
    process.stdout.write(`\n✗ ${c.name}   [${c.method} ${c.path}${soapAction}${type}]\n`);
    for (const line of diffs) process.stdout.write(`    ${line}\n`);
    if (verbose) process.stdout.write(`    --- legacy body:\n${legacy.body}\n    --- ours body:\n${ours!.body}\n`);
  }
  process.stdout.write(`\n${results.length} cases, ${differ} differ\n`);
  return differ === 0 ? 0 : 1;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (e: unknown) => {
      process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exit(2);
    },
  );
}
