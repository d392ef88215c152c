import iconv from 'iconv-lite';
import type { CaseKind } from '../../src/shadow/compare';
import {
  ALNOOR,
  ARABIC_SCHOOL,
  CT11,
  CT12,
  type Corpus,
  DECL,
  FORM,
  AP,
  SOAP12,
  action,
  envelope,
  op,
  opElement,
  servicePath,
  soapOp,
} from './corpus-kit';

const bytes = (text: string, encoding: string) => iconv.encode(text, encoding, { addBOM: false });
const BOM16LE = Buffer.from([0xff, 0xfe]);
const BOM16BE = Buffer.from([0xfe, 0xff]);
/** %-escapes of every byte of `text` in `encoding`. */
const escapedBytes = (text: string, encoding: string) =>
  [...bytes(text, encoding)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');

/**
 * The request-reading rules of issue 12: the request's character encoding (SOAP, forms, query
 * strings), HEAD and other methods, an empty operation name, URL-decoded SOAPAction values, XML
 * error positions, and framing for HTTP/1.0 clients.
 */
export function fidelity(c: Corpus): void {
  const school = op('GetStudentSchool');
  const token = op('GetTokenDevice');
  const SCHOOL = servicePath(school);
  const PUSH = servicePath(token);
  const S = `${SCHOOL}/GetStudentSchool`;
  const T = `${PUSH}/GetTokenDevice`;
  const schoolAction = action('GetStudentSchool');
  // The Arabic school's students are found only when the request's text was decoded right.
  const arabic = (v: 11 | 12, decl = DECL) => envelope(v, soapOp(school, [ARABIC_SCHOOL, '1']), { decl });
  const badChar = (v: 11 | 12, decl = DECL) =>
    envelope(
      v,
      opElement(school, [
        ['school_base_url', ARABIC_SCHOOL],
        ['show_active', 'abc'],
      ]),
      { decl },
    );
  const raw = (name: string, headers: Record<string, string>, body: Buffer, path = SCHOOL) =>
    c.add({ name, method: 'POST', path, headers, bodyBase64: body.toString('base64') });
  const soap11Headers = (contentType: string) => ({ 'Content-Type': contentType, SOAPAction: schoolAction });
  const soap12Headers = (contentType: string) => ({ 'Content-Type': contentType });

  // ---- SOAP: charset, else byte-order mark, else (application/*) the XML declaration, else the media type's default
  const decl16 = '<?xml version="1.0" encoding="utf-16"?>';
  const decl1256 = '<?xml version="1.0" encoding="windows-1256"?>';
  raw('encoding/soap11/utf16le-bom-no-charset', soap11Headers('text/xml'), Buffer.concat([BOM16LE, bytes(arabic(11, decl16), 'utf-16le')]));
  raw('encoding/soap11/utf16be-bom-no-charset', soap11Headers('text/xml'), Buffer.concat([BOM16BE, bytes(arabic(11, decl16), 'utf-16be')]));
  raw('encoding/soap11/utf16le-bom-charset-utf8', soap11Headers(CT11), Buffer.concat([BOM16LE, bytes(arabic(11, decl16), 'utf-16le')]));
  raw(
    'encoding/soap11/utf16le-bom-bad-char-position',
    soap11Headers('text/xml'),
    Buffer.concat([BOM16LE, bytes(badChar(11, decl16), 'utf-16le')]),
  );
  raw(
    'encoding/soap12/utf16le-bom-no-charset',
    soap12Headers('application/soap+xml'),
    Buffer.concat([BOM16LE, bytes(arabic(12, decl16), 'utf-16le')]),
  );
  raw(
    'encoding/soap12/utf16be-bom-no-charset',
    soap12Headers('application/soap+xml'),
    Buffer.concat([BOM16BE, bytes(arabic(12, decl16), 'utf-16be')]),
  );
  raw('encoding/soap12/utf16le-unmarked-no-charset', soap12Headers('application/soap+xml'), bytes(arabic(12, decl16), 'utf-16le'));
  raw('encoding/soap12/utf16-declared-without-bom', soap12Headers('application/soap+xml'), bytes(arabic(12, decl16), 'utf8'));
  raw('encoding/soap12/windows-1256-declaration', soap12Headers('application/soap+xml'), bytes(arabic(12, decl1256), 'windows-1256'));
  raw(
    'encoding/soap12/windows-1256-declaration-bad-char',
    soap12Headers('application/soap+xml'),
    bytes(badChar(12, decl1256), 'windows-1256'),
  );
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
  raw(
    'encoding/soap11/utf-32-bom-no-charset',
    soap11Headers('text/xml'),
    Buffer.concat([Buffer.from([0xff, 0xfe, 0, 0]), bytes(arabic(11, ''), 'utf-32le')]),
  );
  raw('encoding/soap12/utf-7-charset', soap12Headers('application/soap+xml; charset=utf-7'), bytes(arabic(12, ''), 'utf-7'));
  raw('encoding/soap11/unknown-charset', soap11Headers('text/xml; charset=x-no-such-charset'), bytes(arabic(11), 'utf8'));
  raw('encoding/soap12/unknown-charset', soap12Headers('application/soap+xml; charset=x-no-such-charset'), bytes(arabic(12), 'utf8'));
  raw(
    'encoding/soap12/unknown-declared-encoding',
    soap12Headers('application/soap+xml'),
    bytes(arabic(12, '<?xml version="1.0" encoding="x-no-such-charset"?>'), 'utf8'),
  );
  raw(
    'encoding/soap12/unknown-declared-encoding-multiline',
    soap12Headers('application/soap+xml'),
    bytes(arabic(12, '<?xml version="1.0"\n    encoding="x-klingon"?>'), 'utf8'),
  );
  raw(
    'encoding/soap11/unknown-declared-encoding-text-xml',
    soap11Headers('text/xml'),
    bytes(arabic(11, '<?xml version="1.0" encoding="x-no-such-charset"?>'), 'utf8'),
  );
  raw(
    'encoding/no-action/unknown-declared-encoding',
    { 'Content-Type': 'text/xml' },
    bytes(arabic(11, '<?xml version="1.0" encoding="x-no-such-charset"?>'), 'utf8'),
  );
  // a UTF-16 document whose declaration names another encoding: the reader switches to it after the declaration
  raw(
    'encoding/soap12/utf16le-bom-declares-utf-8',
    soap12Headers('application/soap+xml'),
    Buffer.concat([BOM16LE, bytes(arabic(12), 'utf-16le')]),
  );
  raw(
    'encoding/soap12/utf16le-bom-declares-utf-8-line-break',
    soap12Headers('application/soap+xml'),
    Buffer.concat([BOM16LE, bytes(arabic(12, `${DECL}\r\n`), 'utf-16le')]),
  );
  raw(
    'encoding/soap12/utf16be-bom-declares-windows-1256',
    soap12Headers('application/soap+xml'),
    Buffer.concat([BOM16BE, bytes(arabic(12, decl1256), 'utf-16be')]),
  );
  raw('encoding/soap12/utf16le-unmarked-declares-utf-8', soap12Headers('application/soap+xml'), bytes(arabic(12), 'utf-16le'));
  raw(
    'encoding/soap12/utf16le-bom-declares-unicode',
    soap12Headers('application/soap+xml'),
    Buffer.concat([BOM16LE, bytes(arabic(12, '<?xml version="1.0" encoding="unicode"?>'), 'utf-16le')]),
  );
  raw(
    'encoding/soap11/utf16le-bom-declares-utf-8-charset-utf-8',
    soap11Headers(CT11),
    Buffer.concat([BOM16LE, bytes(arabic(11), 'utf-16le')]),
  );
  // names iconv-lite knows and .NET's Encoding.GetEncoding does not are unknown charsets; its own aliases are known
  raw('encoding/soap11/charset-utf8-not-a-dotnet-name', soap11Headers('text/xml; charset=utf8'), bytes(arabic(11), 'utf8'));
  raw('encoding/soap12/charset-utf8-not-a-dotnet-name', soap12Headers('application/soap+xml; charset=utf8'), bytes(arabic(12), 'utf8'));
  raw(
    'encoding/soap11/charset-windows1256-not-a-dotnet-name',
    soap11Headers('text/xml; charset=windows1256'),
    bytes(arabic(11, ''), 'windows-1256'),
  );
  raw('encoding/soap11/charset-dotnet-alias-arabic', soap11Headers('text/xml; charset=arabic'), bytes(arabic(11, ''), 'iso-8859-6'));
  raw(
    'encoding/soap11/charset-dotnet-alias-x-unicode-2-0-utf-8',
    soap11Headers('text/xml; charset=x-unicode-2-0-utf-8'),
    bytes(arabic(11), 'utf8'),
  );
  // bytes that are not UTF-8 where the XML reader decodes UTF-8 itself: refused where it reaches them
  const notUtf8 = (xml: string, bad: Buffer) =>
    Buffer.concat(xml.split('BAD').flatMap((part, i) => (i === 0 ? [bytes(part, 'utf8')] : [bad, bytes(part, 'utf8')])));
  const tokenIn = (v: 11 | 12, id: string, decl = DECL) => envelope(v, opElement(token, [['id', id]]), { decl });
  const invalidIn = (name: string, headers: Record<string, string>, xml: string, bad = Buffer.from([0xff])) =>
    raw(name, headers, notUtf8(xml, bad), PUSH);
  const h12 = soap12Headers('application/soap+xml');
  invalidIn('encoding/soap12/not-utf8-in-value', h12, tokenIn(12, 'dev-1001BAD'));
  invalidIn('encoding/soap12/not-utf8-in-value-no-declaration', h12, tokenIn(12, 'dev-1001BAD', ''));
  invalidIn('encoding/soap12/not-utf8-surrogate-in-value', h12, tokenIn(12, 'devBAD'), Buffer.from([0xed, 0xa0, 0x80]));
  invalidIn(
    'encoding/soap12/not-utf8-overlong-in-name',
    h12,
    tokenIn(12, 'dev-1001').replace('<id>', '<iBADd>'),
    Buffer.from([0xc0, 0x80]),
  );
  invalidIn(
    'encoding/soap12/not-utf8-before-the-body',
    h12,
    tokenIn(12, 'dev-1001').replace('<soap:Body>', '<soap:Header><h>\nBAD</h></soap:Header><soap:Body>'),
  );
  invalidIn('encoding/soap12/not-utf8-after-the-root', h12, `${tokenIn(12, 'dev-1001')}\nBAD`);
  invalidIn('encoding/soap12/not-utf8-cut-short-at-the-end', h12, `${tokenIn(12, 'dev-1001')}BAD`, Buffer.from([0xe2, 0x82]));
  invalidIn('encoding/soap12/not-utf8-charset-utf-8', soap12Headers(CT12), tokenIn(12, 'dev-1001BAD'));
  invalidIn('encoding/soap12/not-utf8-charset-utf8', soap12Headers('application/soap+xml; charset=utf8'), tokenIn(12, 'dev-1001BAD'));
  invalidIn('encoding/soap12/not-utf8-byte-order-mark', h12, `\ufeff${tokenIn(12, 'dev-1001BAD')}`);
  invalidIn(
    'encoding/soap11/not-utf8-text-xml',
    { 'Content-Type': 'text/xml', SOAPAction: action('GetTokenDevice') },
    tokenIn(11, 'dev-1001BAD'),
  );

  // ---- forms and query strings: the charset the request names
  const url1256 = escapedBytes(ARABIC_SCHOOL, 'windows-1256');
  const form1256 = `school_base_url=${url1256}&show_active=1`;
  c.post('encoding/post/windows-1256-escaped', S, form1256, `${FORM}; charset=windows-1256`);
  raw(
    'encoding/post/windows-1256-raw-bytes',
    { 'Content-Type': `${FORM}; charset=windows-1256` },
    bytes(`school_base_url=${ARABIC_SCHOOL}&show_active=1`, 'windows-1256'),
    S,
  );
  raw(
    'encoding/post/iso-8859-6-raw-bytes',
    { 'Content-Type': `${FORM}; charset=iso-8859-6` },
    bytes(`school_base_url=${ARABIC_SCHOOL}&show_active=1`, 'iso-8859-6'),
    S,
  );
  c.post('encoding/post/windows-1256-escaped-no-charset', S, form1256);
  c.post('encoding/post/charset-windows1256-not-a-dotnet-name', S, form1256, `${FORM}; charset=windows1256`);
  c.post(
    'encoding/post/unknown-charset',
    S,
    `school_base_url=${encodeURIComponent(ARABIC_SCHOOL)}&show_active=1`,
    `${FORM}; charset=x-no-such-charset`,
  );
  c.post('encoding/post/percent-u-escape', T, 'id=dev%u002D1001');
  c.post('encoding/post/invalid-utf8-escape', T, 'id=dev-1001%FF');
  c.add({
    name: 'encoding/get/windows-1256-query-body-charset',
    method: 'GET',
    path: `${S}?${form1256}`,
    headers: { 'Content-Type': 'text/plain; charset=windows-1256' },
    body: 'x',
  });
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
  c.add({
    name: 'methods/post-empty-operation',
    method: 'POST',
    path: `${PUSH}/`,
    headers: { 'Content-Type': FORM },
    body: 'id=dev-1001',
    kind: 'error',
  });

  // ---- SOAPAction (and SOAP 1.2's action) are URL-decoded before they are matched
  const tokBody11 = envelope(11, soapOp(token, ['dev-1001']));
  const escapedActions: Array<[string, string]> = [
    ['percent-letter', `"${AP}Get%54okenDevice"`],
    ['percent-lower-hex', `"${AP}Get%74okenDevice"`],
    ['percent-all', `"${encodeURIComponent(`${AP}GetTokenDevice`)}"`],
    ['percent-u', `"${AP}Get%u0054okenDevice"`],
    ['plus', `"${AP}GetTokenDevice+"`],
    ['percent-broken', `"${AP}GetTokenDevice%zz"`],
    ['percent-invalid-utf8', `"${AP}GetTokenDevice%FF"`],
    ['percent-arabic', `"${AP}${encodeURIComponent('جهاز')}"`],
    ['percent-quote-inside', `%22${AP}GetTokenDevice%22`],
  ];
  for (const [label, a] of escapedActions) c.soap11(`routing/soap11/action-${label}`, PUSH, tokBody11, a);
  const unknownBody12 = envelope(12, opElement('NoSuchOp', [['id', 'dev-1001']]));
  c.soap12(
    'routing/soap12/action-percent-escaped',
    PUSH,
    unknownBody12,
    `application/soap+xml; charset=utf-8; action="${AP}Get%54okenDevice"`,
  );
  c.soap12('routing/soap12/action-percent-unknown', PUSH, unknownBody12, `application/soap+xml; charset=utf-8; action="${AP}No%53uchOp"`);

  // ---- where the XML reader reports an error
  const positions: Array<[string, string]> = [
    ['not-xml-after-blank-lines', '\n\n   not xml'],
    ['not-xml-after-declaration', `${DECL}\nnot xml`],
    [
      'unbound-prefix-multiline',
      `${DECL}\n<soap:Envelope xmlns:soap="${SOAP12}">\n  <soap:Body>\n    <x:GetTokenDevice/>\n  </soap:Body>\n</soap:Envelope>`,
    ],
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
