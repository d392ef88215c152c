import {
  ALNOOR,
  ARABIC_SCHOOL,
  CT11,
  CT12,
  type Corpus,
  DECL,
  FORM,
  AP,
  NS,
  actionUri,
  OP,
  PUSH,
  SCHOOL,
  SOAP11,
  SOAP12,
  action,
  envelope,
  opElement,
  schEl,
  soapOp,
  tokEl,
  tokOp,
} from './corpus-kit';

/**
 * How a SOAP request is routed (SOAPAction, the 1.2 action, the body element, the media type,
 * the path) and what the envelope reader tolerates.
 */

/** Routing: SOAPAction, the SOAP 1.2 action, the body element, the media type, the path's case. */
export function soapRouting(c: Corpus): void {
  const { auth, token, serverKey } = OP;
  const tokBody11 = envelope(11, soapOp(token, ['dev-1001']));
  const tokBody12 = envelope(12, soapOp(token, ['dev-1001']));
  const unknownBody11 = envelope(11, opElement('NoSuchOp', [['id', 'dev-1001']]));
  const unknownBody12 = envelope(12, opElement('NoSuchOp', [['id', 'dev-1001']]));
  const keyBody11 = envelope(11, soapOp(serverKey, []));
  const keyBody12 = envelope(12, soapOp(serverKey, []));
  const soapActions: Array<[string, string]> = [
    ['unquoted', `${AP}GetTokenDevice`],
    ['half-quoted-start', `"${AP}GetTokenDevice`],
    ['half-quoted-end', `${AP}GetTokenDevice"`],
    ['empty-quoted', '""'],
    ['empty', ''],
    ['unknown', action('NoSuchOp')],
    ['unknown-unquoted', 'urn:whatever'],
    ['wrong-case-op', action('gettokendevice')],
    ['wrong-case-ns', `"${actionUri('GetTokenDevice', NS.toUpperCase())}"`],
    ['other-namespace', '"http://example.org/GetTokenDevice"'],
    ['op-name-only', '"GetTokenDevice"'],
    ['trailing-space-inside', `"${AP}GetTokenDevice "`],
    ['spaces-around', `  "${AP}GetTokenDevice"  `],
    ['single-quotes', `'${AP}GetTokenDevice'`],
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
  c.soap12('routing/soap12/action-known-body-known', PUSH, tokBody12, ct12a(`${AP}GetTokenDevice`));
  c.soap12('routing/soap12/action-unquoted', PUSH, tokBody12, `application/soap+xml; charset=utf-8; action=${AP}GetTokenDevice`);
  c.soap12('routing/soap12/action-only-param', PUSH, tokBody12, `application/soap+xml; action="${AP}GetTokenDevice"`);
  c.soap12('routing/soap12/action-other-op-body-token', PUSH, tokBody12, ct12a(`${AP}GetServerKeyAndSender`));
  c.soap12('routing/soap12/action-token-body-key', PUSH, keyBody12, ct12a(`${AP}GetTokenDevice`));
  c.soap12('routing/soap12/action-unknown-body-known', PUSH, tokBody12, ct12a(`${AP}NoSuchOp`));
  c.soap12('routing/soap12/action-unknown-body-unknown', PUSH, unknownBody12, ct12a(`${AP}NoSuchOp`));
  c.soap12('routing/soap12/action-known-body-unknown', PUSH, unknownBody12, ct12a(`${AP}GetTokenDevice`));
  c.soap12('routing/soap12/action-empty-body-unknown', PUSH, unknownBody12, ct12a(''));
  c.soap12('routing/soap12/action-wrong-case-body-unknown', PUSH, unknownBody12, ct12a(`${AP}gettokendevice`));
  c.soap12('routing/soap12/no-action-body-unknown', PUSH, unknownBody12);
  c.soap12('routing/soap12/no-action-other-service-body', PUSH, envelope(12, soapOp(auth, ['1', '2'])));
  c.soap12(
    'routing/soap12/body-in-wrong-ns',
    PUSH,
    envelope(12, `<GetTokenDevice xmlns="http://example.org/"><id>dev-1001</id></GetTokenDevice>`),
  );
  c.soap12('routing/soap12/ct-no-charset', PUSH, tokBody12, 'application/soap+xml');
  c.soap12('routing/soap12/with-soapaction-header', PUSH, tokBody12, CT12, { SOAPAction: action('GetTokenDevice') });
  c.soap12('routing/soap12/with-wrong-soapaction-header', PUSH, tokBody12, CT12, { SOAPAction: action('NoSuchOp') });
  c.soap11('routing/soap12/as-text-xml-with-action', PUSH, tokBody12, action('GetTokenDevice'));
  c.soap11('routing/soap12/as-text-xml-no-action', PUSH, tokBody12, null);
  c.soap11('routing/soap12/as-text-plain', PUSH, tokBody12, null, 'text/plain');
  c.soap11('routing/soap12/as-application-xml', PUSH, tokBody12, null, 'application/xml');
  c.soap11('routing/soap12/no-content-type', PUSH, tokBody12, null, null);

  // paths without regard to case (the legacy host is asked the canonical path)
  c.add({
    name: 'routing/path-case/soap11',
    method: 'POST',
    path: '/pushnotificationmobile.ASMX',
    legacyPath: PUSH,
    headers: { 'Content-Type': CT11, SOAPAction: action('GetTokenDevice') },
    body: tokBody11,
  });
  c.add({
    name: 'routing/path-case/soap12',
    method: 'POST',
    path: '/PUSHNOTIFICATIONMOBILE.asmx',
    legacyPath: PUSH,
    headers: { 'Content-Type': CT12 },
    body: tokBody12,
  });
  c.get('routing/path-case/get', '/pushnotificationmobile.asmx/GetTokenDevice?id=dev-1001', {
    legacyPath: `${PUSH}/GetTokenDevice?id=dev-1001`,
  });
  c.add({
    name: 'routing/path-case/post',
    method: 'POST',
    path: '/Pushnotificationmobile.Asmx/GetTokenDevice',
    legacyPath: `${PUSH}/GetTokenDevice`,
    headers: { 'Content-Type': FORM },
    body: 'id=dev-1001',
  });
}

/** What the envelope reader tolerates: order, unknown elements, comments, CDATA, references, nil, prefixes, declarations. */
export function lenientParsing(c: Corpus): void {
  const { school, token } = OP;
  const lenient: Array<[string, string, string]> = [
    // [label, service path, op element]
    ['params-out-of-order', SCHOOL, schEl(`<show_active>49</show_active><school_base_url>${ALNOOR}</school_base_url>`)],
    [
      'unknown-element',
      SCHOOL,
      schEl(`<foo>bar</foo><school_base_url>${ALNOOR}</school_base_url><bar><baz/></bar><show_active>49</show_active><extra>1</extra>`),
    ],
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
    [
      'char-refs-arabic-url',
      SCHOOL,
      schEl(`<school_base_url>http://&#x645;&#x62F;&#x631;&#x633;&#x629;.example</school_base_url><show_active>&#52;9</show_active>`),
    ],
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
    [
      'prefixed-school',
      SCHOOL,
      `<t:GetStudentSchool xmlns:t="${NS}"><t:school_base_url>${ALNOOR}</t:school_base_url><t:show_active>49</t:show_active></t:GetStudentSchool>`,
    ],
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
  const envVariants: Array<[string, (v: 11 | 12) => string]> = [
    ['soap-header-empty', (v) => envelope(v, tokOp(), { header: '<soap:Header />' })],
    [
      'soap-header-content',
      (v) => envelope(v, tokOp(), { header: `<soap:Header><h:Auth xmlns:h="urn:h"><h:user>u</h:user></h:Auth></soap:Header>` }),
    ],
    [
      'soap-header-must-understand',
      (v) =>
        envelope(v, tokOp(), {
          header: `<soap:Header><h:Auth xmlns:h="urn:h" soap:mustUnderstand="${v === 11 ? '1' : 'true'}">x</h:Auth></soap:Header>`,
        }),
    ],
    ['pretty-printed-lf', (v) => envelope(v, soapOp(token, ['dev-1001'], '\n'), { nl: '\n' })],
    ['pretty-printed-crlf', (v) => envelope(v, soapOp(token, ['dev-1001'], '\r\n'), { nl: '\r\n' })],
    ['no-xml-declaration', (v) => envelope(v, tokOp(), { decl: '' })],
    ['declaration-no-encoding', (v) => envelope(v, tokOp(), { decl: '<?xml version="1.0"?>' })],
    ['declaration-utf8-upper', (v) => envelope(v, tokOp(), { decl: '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>' })],
    ['declaration-iso-8859-1-ascii', (v) => envelope(v, tokOp(), { decl: '<?xml version="1.0" encoding="iso-8859-1"?>' })],
    ['bom', (v) => `\uFEFF${envelope(v, tokOp())}`],
    ['bom-no-declaration', (v) => `\uFEFF${envelope(v, tokOp(), { decl: '' })}`],
    ['leading-whitespace', (v) => `\n  ${envelope(v, tokOp(), { decl: '' })}`],
    ['trailing-whitespace', (v) => `${envelope(v, tokOp())}\n\n  `],
    ['trailing-comment', (v) => `${envelope(v, tokOp())}<!-- end -->`],
    ['other-envelope-prefix', (v) => `${DECL}<s:Envelope xmlns:s="${v === 11 ? SOAP11 : SOAP12}"><s:Body>${tokOp()}</s:Body></s:Envelope>`],
    ['default-ns-envelope', (v) => `${DECL}<Envelope xmlns="${v === 11 ? SOAP11 : SOAP12}"><Body>${tokOp()}</Body></Envelope>`],
    [
      'envelope-attrs',
      (v) =>
        `${DECL}<soap:Envelope xmlns:soap="${v === 11 ? SOAP11 : SOAP12}" foo="bar"><soap:Body id="b">${tokOp()}</soap:Body></soap:Envelope>`,
    ],
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
    bodyBase64: Buffer.from(
      envelope(11, tokEl('<id>caf\u00e9</id>'), { decl: '<?xml version="1.0" encoding="iso-8859-1"?>' }),
      'latin1',
    ).toString('base64'),
  });
}
