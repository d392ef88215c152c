import {
  ALNOOR,
  ARABIC_SCHOOL,
  CT11,
  CT12,
  type Corpus,
  DECL,
  NS,
  OP,
  PUSH,
  type Params,
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
 * show_active over SOAP (a char travels as its UTF-16 code), and the faults: malformed XML,
 * DTDs, envelopes that are not SOAP.
 */

/** show_active over SOAP, and where a bad one is reported. */
export function showActive(c: Corpus): void {
  const { school } = OP;
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
      const params: Params = [
        ['school_base_url', ALNOOR],
        ['show_active', v],
      ];
      c.soap11(
        `show_active/soap${ver}/${label}`,
        SCHOOL,
        envelope(ver, opElement(school, params)),
        ver === 11 ? action('GetStudentSchool') : null,
        ver === 11 ? CT11 : CT12,
      );
      if (['absent', 'empty', '65536', 'abc', '4-space-9', 'minus-1', 'spaces-49', 'exponent'].includes(label)) {
        c.soap11(
          `show_active/soap${ver}/${label}-multiline`,
          SCHOOL,
          envelope(ver, opElement(school, params, { nl: '\n', indent: '    ' }), { nl: '\n' }),
          ver === 11 ? action('GetStudentSchool') : null,
          ver === 11 ? CT11 : CT12,
        );
      }
    }
  }
  const badShow: Params = [
    ['school_base_url', ARABIC_SCHOOL],
    ['show_active', 'abc'],
  ];
  c.soap11('show_active/soap11/abc-after-arabic-same-line', SCHOOL, envelope(11, opElement(school, badShow)), action('GetStudentSchool'));
  c.soap11(
    'show_active/soap11/abc-crlf-multiline',
    SCHOOL,
    envelope(11, opElement(school, badShow, { nl: '\r\n', indent: '\t' }), { nl: '\r\n' }),
    action('GetStudentSchool'),
  );
  c.soap11('show_active/soap11/abc-after-bom', SCHOOL, `\uFEFF${envelope(11, opElement(school, badShow))}`, action('GetStudentSchool'));
  c.soap11(
    'show_active/soap11/abc-after-header',
    SCHOOL,
    envelope(11, opElement(school, badShow, { nl: '\n' }), { nl: '\n', header: '<soap:Header>\n  <!-- a\n comment -->\n</soap:Header>' }),
    action('GetStudentSchool'),
  );
  c.soap11(
    'show_active/soap11/abc-params-reversed',
    SCHOOL,
    envelope(11, schEl(`<show_active>abc</show_active>\n<school_base_url>${ALNOOR}</school_base_url>`)),
    action('GetStudentSchool'),
  );
  c.soap11(
    'show_active/soap11/abc-cdata',
    SCHOOL,
    envelope(11, schEl(`<school_base_url>x</school_base_url>\n  <show_active><![CDATA[abc]]></show_active>`)),
    action('GetStudentSchool'),
  );
  c.soap11(
    'show_active/soap11/abc-no-declaration',
    SCHOOL,
    envelope(11, opElement(school, badShow), { decl: '' }),
    action('GetStudentSchool'),
  );
  c.soap11(
    'show_active/soap11/abc-prefixed',
    SCHOOL,
    envelope(
      11,
      `<t:GetStudentSchool xmlns:t="${NS}">\n<t:school_base_url>x</t:school_base_url><t:show_active>abc</t:show_active></t:GetStudentSchool>`,
    ),
    action('GetStudentSchool'),
  );
  c.soap11(
    'show_active/soap11/49-and-abc-duplicate',
    SCHOOL,
    envelope(11, schEl('<show_active>49</show_active><show_active>abc</show_active>')),
    action('GetStudentSchool'),
  );
}

/** Faults: malformed XML, empty bodies, DTDs and entities, envelopes without a SOAP body. */
export function faults(c: Corpus): void {
  const { school } = OP;
  const malformed: Array<[string, string]> = [
    ['not-xml', 'this is not xml'],
    ['truncated', envelope(11, tokOp()).slice(0, 180)],
    ['unclosed-root', '<a'],
    [
      'mismatched-tags',
      `${DECL}<soap:Envelope xmlns:soap="${SOAP11}"><soap:Body>${tokEl('<id>dev-1001</idx>')}</soap:Body></soap:Envelope>`,
    ],
    ['junk-after-root', `${envelope(11, tokOp())}<more/>`],
    [
      'unbound-prefix',
      `${DECL}<soap:Envelope xmlns:soap="${SOAP11}"><soap:Body><x:GetTokenDevice><x:id>1</x:id></x:GetTokenDevice></soap:Body></soap:Envelope>`,
    ],
    ['control-char-ref', envelope(11, tokEl('<id>dev&#1;</id>'))],
    ['undefined-entity', envelope(11, tokEl('<id>&nbsp;</id>'))],
    [
      'multiline-error',
      `${DECL}\n<soap:Envelope xmlns:soap="${SOAP11}">\n  <soap:Body>\n    <GetTokenDevice xmlns="${NS}">\n      <id>dev-1001</id x>\n    </GetTokenDevice>\n  </soap:Body>\n</soap:Envelope>`,
    ],
  ];
  for (const [label, body] of malformed) {
    c.soap11(`fault/soap11/malformed-${label}`, PUSH, body, action('GetTokenDevice'));
    c.soap11(`fault/no-action/malformed-${label}`, PUSH, body, null);
    c.soap12(`fault/soap12/malformed-${label}`, PUSH, body.replace(SOAP11, SOAP12));
  }
  c.add({
    name: 'fault/soap11/invalid-utf8',
    method: 'POST',
    path: PUSH,
    headers: { 'Content-Type': CT11, SOAPAction: action('GetTokenDevice') },
    bodyBase64: Buffer.concat([
      Buffer.from(envelope(11, tokEl('<id>dev-')).replace(/<\/soap:Body>.*$/, '')),
      Buffer.from([0xff, 0xfe, 0xc3]),
      Buffer.from(`</id></GetTokenDevice></soap:Body></soap:Envelope>`),
    ]).toString('base64'),
  });
  for (const [label, body11, body12] of [
    ['empty-body', '', ''],
    ['whitespace-body', '  \n', '  \n'],
  ] as const) {
    c.soap11(`fault/soap11/${label}`, PUSH, body11, action('GetTokenDevice'));
    c.soap11(`fault/no-action/${label}`, PUSH, body11, null);
    c.soap12(`fault/soap12/${label}`, PUSH, body12);
  }
  const doctype = (v: 11 | 12) => `${DECL}<!DOCTYPE soap:Envelope [<!ELEMENT soap:Envelope ANY>]>${envelope(v, tokOp(), { decl: '' })}`;
  const laughs = (v: 11 | 12) =>
    `${DECL}<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>` +
    envelope(v, tokEl('<id>&lol3;</id>'), { decl: '' });
  const xxe = (v: 11 | 12) =>
    `${DECL}<!DOCTYPE foo [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>${envelope(v, tokEl('<id>&xxe;</id>'), { decl: '' })}`;
  const xxeParam = (v: 11 | 12) =>
    `${DECL}<!DOCTYPE foo [<!ENTITY % p SYSTEM "http://127.0.0.1:9/x.dtd"> %p;]>${envelope(v, tokOp(), { decl: '' })}`;
  const structural: Array<[string, (v: 11 | 12) => string]> = [
    ['doctype', doctype],
    ['entity-expansion', laughs],
    ['external-entity', xxe],
    ['external-parameter-entity', xxeParam],
    ['root-not-envelope', () => `${DECL}${tokOp()}`],
    ['root-envelope-wrong-ns', () => `${DECL}<soap:Envelope xmlns:soap="urn:not-soap"><soap:Body>${tokOp()}</soap:Body></soap:Envelope>`],
    ['envelope-without-body', (v) => `${DECL}<soap:Envelope xmlns:soap="${v === 11 ? SOAP11 : SOAP12}"></soap:Envelope>`],
    ['envelope-only-header', (v) => `${DECL}<soap:Envelope xmlns:soap="${v === 11 ? SOAP11 : SOAP12}"><soap:Header/></soap:Envelope>`],
    ['empty-body-element', (v) => `${DECL}<soap:Envelope xmlns:soap="${v === 11 ? SOAP11 : SOAP12}"><soap:Body /></soap:Envelope>`],
    [
      'empty-body-element-whitespace',
      (v) => `${DECL}<soap:Envelope xmlns:soap="${v === 11 ? SOAP11 : SOAP12}"><soap:Body>\n  </soap:Body></soap:Envelope>`,
    ],
    [
      'body-outside-envelope-ns',
      (v) => `${DECL}<soap:Envelope xmlns:soap="${v === 11 ? SOAP11 : SOAP12}"><Body>${tokOp()}</Body></soap:Envelope>`,
    ],
    [
      'body-text-only',
      (v) => `${DECL}<soap:Envelope xmlns:soap="${v === 11 ? SOAP11 : SOAP12}"><soap:Body>hello</soap:Body></soap:Envelope>`,
    ],
  ];
  for (const [label, f] of structural) {
    c.soap11(`fault/soap11/${label}`, PUSH, f(11), action('GetTokenDevice'));
    c.soap11(`fault/no-action/${label}`, PUSH, f(11), null);
    c.soap12(`fault/soap12/${label}`, PUSH, f(12));
  }
  c.soap11(
    'fault/soap11/envelope-mismatch-soap11-action-12-env',
    SCHOOL,
    envelope(12, soapOp(school, [ALNOOR, '1'])),
    action('GetStudentSchool'),
  );
}
