import iconv from 'iconv-lite';
import { SOAP11, SOAP12, XSD, XSI, actionUri } from '../legacy/corpus-kit';
import type { Draws } from './draws';
import type { Param } from './shapes';
import { textTags } from './values';

/**
 * A SOAP request drawn: the envelope (prefixes, namespaces, declaration, header, white space,
 * comments, its root, one operation element or two), each parameter's content (escaped text,
 * CDATA, character references, a child element, a processing instruction, nil), the SOAPAction or
 * SOAP 1.2's `action`, the Content-Type (media type, charset, case, white space) and the bytes in
 * the charset said (or another).
 */

export interface Drawn {
  headers: Record<string, string>;
  body: Buffer;
  tags: string[];
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const refs = (s: string) => [...s].map((ch) => (/[\w .:/-]/.test(ch) ? ch : `&#x${ch.codePointAt(0)!.toString(16)};`)).join('');

/** A parameter's element with its content in one of the forms XML allows (or, tagged, one it does not). */
function paramElement(d: Draws, p: Param, prefix: string, tags: string[]): string {
  const name = `${prefix}${p.name}`;
  const v = p.value.text;
  // split by code points, never inside a surrogate pair
  const [head = '', ...rest] = [...v];
  const tail = rest.join('');
  if (textTags(v).includes('value:control')) tags.push(`soap:control-character@${p.at}`);
  // not an XML name (`a b`): the document goes wrong here, after the parameters before it
  if (!/^[\p{L}_][\p{L}\p{N}_.-]*$/u.test(p.name)) tags.push(`soap:malformed-late@${p.nameAt}`);
  const at = d.position;
  const form = d.weighted([
    [80, 'text'],
    [5, 'cdata'],
    [5, 'refs'],
    [3, 'nil'],
    [2, 'child'],
    [2, 'pi'],
    [2, 'comment'],
    [1, 'attribute'],
  ] as const);
  let content: string;
  if (form === 'cdata' && !v.includes(']]>')) content = `<![CDATA[${v}]]>`;
  else if (form === 'refs') content = refs(v);
  else if (form === 'nil') return `<${name} xsi:nil="true" xmlns:xsi="${XSI}" />`;
  else if (form === 'child') {
    tags.push(`soap:child-element@${at}`);
    content = `<b>${esc(v)}</b>`;
  } else if (form === 'pi') {
    tags.push(`soap:processing-instruction@${at}`);
    content = `${esc(head)}<?pi x?>${esc(tail)}`;
  } else if (form === 'comment') {
    // after text, a comment is refused by the reader (400) when it reads this parameter
    if (head !== '') tags.push(`soap:malformed-late@${at}`);
    content = `${esc(head)}<!-- c -->${esc(tail)}`;
  } else if (form === 'attribute') return `<${name} a="${esc(v).replace(/"/g, '&quot;')}">${esc(v)}</${name}>`;
  else content = esc(v);
  return v === '' && d.chance(50) ? `<${name} />` : `<${name}>${content}</${name}>`;
}

/** The operation element: in the service namespace by default or by a prefix, its parameters in order. */
function operationElement(d: Draws, opName: string, params: Param[], ns: string, tags: string[]): string {
  const style = d.weighted([
    [75, 'default'],
    [12, 'prefixed'],
    [8, 'prefixed-op-only'],
    [5, 'params-unqualified'],
  ] as const);
  const nl = d.weighted([
    [75, ''],
    [15, '\n'],
    [10, '\r\n    '],
  ] as const);
  if (style === 'default') {
    const kids = params.map((p) => nl + paramElement(d, p, '', tags)).join('');
    return kids === '' && d.chance(50) ? `<${opName} xmlns="${ns}" />` : `<${opName} xmlns="${ns}">${kids}${nl}</${opName}>`;
  }
  const kidPrefix = style === 'prefixed' ? 't:' : '';
  const kids = params.map((p) => nl + paramElement(d, p, kidPrefix, tags)).join('');
  const extra = style === 'params-unqualified' ? ' xmlns=""' : '';
  return `<t:${opName} xmlns:t="${ns}"${extra}>${kids}${nl}</t:${opName}>`;
}

const DECLS = [
  [60, '<?xml version="1.0" encoding="utf-8"?>'],
  [15, ''],
  [8, '<?xml version="1.0"?>'],
  [10, 'CHARSET'],
  [4, '<?xml version="1.0" encoding="utf-8" standalone="yes"?>'],
  [3, '<?xml version="1.1"?>'],
] as const;
const CHARSETS = [
  [55, 'utf-8'],
  [12, ''],
  [4, '"utf-8"'],
  [4, 'UTF-8'],
  [6, 'utf-16'],
  [6, 'iso-8859-1'],
  [6, 'windows-1256'],
  [3, 'x-no-such-charset'],
  [2, 'utf8'],
  [2, 'us-ascii'],
] as const;

/** The envelope around one operation element (or two), with the drawn shape. */
export function envelope(d: Draws, version: 11 | 12, ops: string[], charset: string, tags: string[]): string {
  const envNs = version === 11 ? SOAP11 : SOAP12;
  const at = d.position;
  let decl: string = d.weighted(DECLS);
  if (decl === 'CHARSET') decl = `<?xml version="1.0" encoding="${charset.replace(/"/g, '') || 'utf-8'}"?>`;
  if (decl.includes('1.1')) tags.push(`soap:xml-1.1@${at}`);
  const prefix = d.weighted([
    [70, 'soap'],
    [10, 's'],
    [10, ''],
    [5, 'SOAP-ENV'],
    [5, 'e'],
  ] as const);
  const q = (local: string) => (prefix === '' ? local : `${prefix}:${local}`);
  const nsDecl = prefix === '' ? `xmlns="${envNs}"` : `xmlns:${prefix}="${envNs}"`;
  const schemaDecls = d.chance(70) ? ` xmlns:xsi="${XSI}" xmlns:xsd="${XSD}"` : '';
  const nl = d.weighted([
    [70, ''],
    [15, '\n'],
    [10, '\r\n'],
    [5, '\n\t'],
  ] as const);
  const header = d.weighted([
    [80, ''],
    [10, `<${q('Header')} />`],
    [10, `<${q('Header')}><h:Auth xmlns:h="urn:h"><h:user>u</h:user></h:Auth></${q('Header')}>`],
  ]);
  const comment = d.chance(8) ? '<!-- c -->' : '';
  const rootAt = d.position;
  const root = d.weighted([
    [90, 'Envelope'],
    [3, 'other-version'],
    [2, 'not-envelope'],
    [2, 'no-body'],
    [2, 'text-after'],
    [1, 'truncated'],
  ] as const);
  const body = `<${q('Body')}>${comment}${nl}${ops.join(nl)}${nl}</${q('Body')}>`;
  const inside = `${nl}${header ? header + nl : ''}${root === 'no-body' ? '' : body}${nl}`;
  let xml: string;
  if (root === 'other-version') tags.push(`soap:envelope-of-other-version@${rootAt}`);
  if (root === 'other-version')
    xml = `<${q('Envelope')} ${nsDecl.replace(envNs, version === 11 ? SOAP12 : SOAP11)}${schemaDecls}>${inside}</${q('Envelope')}>`;
  else if (root === 'not-envelope') {
    tags.push(`soap:root-not-envelope@${rootAt}`);
    xml = `<${q('Foo')} ${nsDecl}${schemaDecls}>${inside}</${q('Foo')}>`;
  } else xml = `<${q('Envelope')} ${nsDecl}${schemaDecls}>${inside}</${q('Envelope')}>`;
  if (root === 'text-after') {
    const after = d.pick(['<!-- end -->', '\n', 'x', '<more/>']);
    if (after.trim() !== '' && !after.startsWith('<!--')) tags.push(`soap:malformed-late@${rootAt}`);
    xml += after;
  }
  if (root === 'truncated') {
    tags.push(`soap:malformed-late@${rootAt}`);
    xml = xml.slice(0, Math.max(1, xml.length - 1 - d.int(20)));
  }
  return `${decl}${decl && nl}${d.chance(5) ? '<!-- first -->' : ''}${xml}`;
}

/** The request body's operation element(s): the one named, sometimes followed by a second (tagged). */
export function operations(d: Draws, opName: string, params: Param[], otherOp: string, ns: string, tags: string[]): string[] {
  const first = operationElement(d, opName, params, ns, tags);
  const at = d.position;
  if (!d.chance(3)) return [first];
  tags.push(`soap:two-operations@${at}`);
  return [first, operationElement(d, d.pick([otherOp, opName]), [], ns, tags)];
}

/** SOAP 1.1's SOAPAction for an operation name (null: no header). */
function soapAction(d: Draws, opName: string, otherOp: string, ns: string): string | null {
  const right = actionUri(opName, ns);
  return d.weighted<() => string | null>([
    [70, () => `"${right}"`],
    [8, () => right],
    [5, () => null],
    [2, () => '""'],
    [2, () => `"${actionUri(otherOp, ns)}"`],
    [2, () => `"${actionUri('NoSuchOp', ns)}"`],
    [2, () => `"http://example.org/${opName}"`],
    [2, () => `"${right.toLowerCase()}"`],
    [3, () => `"${right.replace(/[A-Z]/, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}"`],
    [2, () => `  "${right}"  `],
    [2, () => `"${opName}"`],
  ])();
}

/** The media type, charset and action of the Content-Type, as clients write them (and some do not). */
function contentType(d: Draws, version: 11 | 12, action: string, charset: string, tags: string[]): string | null {
  const typeAt = d.position;
  const type = d.weighted([
    [90, version === 11 ? 'text/xml' : 'application/soap+xml'],
    [3, version === 11 ? 'application/soap+xml' : 'text/xml'],
    [2, 'text/plain'],
    [2, 'application/xml'],
    [3, ''],
  ] as const);
  if (type !== (version === 11 ? 'text/xml' : 'application/soap+xml')) tags.push(`soap:content-type-not-its-own@${typeAt}`);
  if (type === '') return null;
  const cased = d.chance(10) ? type.toUpperCase() : type;
  const at = d.position;
  const sep = d.weighted([
    [80, '; '],
    [10, ';'],
    [5, ' ; '],
    [5, ';  '],
  ] as const);
  const params: string[] = [];
  if (charset !== '') params.push(`charset=${charset}`);
  if (version === 12 && type === 'application/soap+xml') {
    const actionAt = d.position;
    const a = d.weighted([
      [70, ''],
      [15, `"${action}"`],
      [10, action],
      [5, '"urn:no-such-action"'],
    ]);
    if (a !== '') params.push(`action=${a}`);
    if (a === action || a === `"${action}"`) tags.push(`soap:action-param@${actionAt}`);
  }
  if (d.chance(3)) params.push('x=y');
  if (params.length > 0 && sep.startsWith(' ')) tags.push(`content-type:space-before-semicolon@${at}`);
  return [cased, ...params].join(sep);
}

/** The body's bytes: in the charset said, else UTF-8; sometimes with a byte-order mark, sometimes in another charset than said. */
function bytes(d: Draws, xml: string, charset: string, charsetAt: number, tags: string[]): Buffer {
  const said = charset.replace(/"/g, '').toLowerCase();
  const known = ['utf-8', 'utf-16', 'iso-8859-1', 'windows-1256', 'us-ascii'];
  const otherAt = d.position;
  const meant = known.includes(said) ? said : 'utf-8';
  const encoding = d.chance(5) ? d.pick(known) : meant;
  if (encoding !== meant && /[^\u0000-\u007f]/.test(xml)) tags.push(`soap:bytes-not-in-charset@${otherAt}`);
  const bom = d.chance(5) || encoding === 'utf-16';
  const out = iconv.encode(xml, encoding === 'utf-16' ? 'utf-16le' : encoding, { addBOM: bom && encoding.startsWith('utf') });
  // a UTF-16 byte-order mark before a declaration of another encoding: XmlReader switches to the declaration's
  const declared = /^<\?xml[^>]*encoding="([^"]*)"/.exec(xml)?.[1].toLowerCase();
  if (encoding === 'utf-16' && declared !== undefined && declared !== 'utf-16')
    tags.push(`soap:bom-against-declaration@${charsetAt}`, `soap:bom-against-declaration@${otherAt}`);
  // a name the charset cannot write becomes `?`: `<?>` is a processing instruction without a target
  if (/<\/?\?>/.test(out.toString('latin1'))) tags.push(`soap:pi-without-target@${charsetAt}`, `soap:pi-without-target@${otherAt}`);
  return out;
}

/** A SOAP call of `opName` (or of an operation that is not the service's): envelope, headers and bytes. */
export function soapCall(d: Draws, version: 11 | 12, opName: string, otherOp: string, params: Param[], ns: string): Drawn {
  const tags: string[] = [];
  const charsetAt = d.position;
  const charset: string = d.weighted(CHARSETS);
  if (charset === 'utf8') tags.push(`charset:not-a-dotnet-name@${charsetAt}`);
  const xml = envelope(d, version, operations(d, opName, params, otherOp, ns, tags), charset, tags);
  const headers: Record<string, string> = {};
  const type = contentType(d, version, actionUri(opName, ns), charset, tags);
  if (type !== null) headers['Content-Type'] = type;
  const action = version === 11 || d.chance(5) ? soapAction(d, opName, otherOp, ns) : null;
  if (action !== null) headers.SOAPAction = action;
  const body = bytes(d, xml, charset, charsetAt, tags);
  const emptyAt = d.position;
  if (!d.chance(2)) return { headers, body, tags };
  tags.push(`soap:empty-body@${emptyAt}`);
  return { headers, body: Buffer.alloc(0), tags };
}
