import {
  ALNOOR,
  AP,
  CT11,
  CT12,
  type Corpus,
  DECL,
  NS,
  OP,
  PUSH,
  SCHOOL,
  SOAP11,
  SOAP12,
  action,
  envelope,
  schEl,
  servicePath,
  tokEl,
} from './corpus-kit';

/**
 * What ASMX's reader refuses or reads otherwise than a lenient XML parser (issue 39): characters XML
 * does not allow, raw or referenced, wherever they are and up to where ASMX stops reading; the XML
 * declaration; a root that is not an Envelope; a Body out of place; parameters holding elements,
 * comments or processing instructions; several operation elements and other Body shapes; SOAP's
 * Content-Type as System.Web.Services parses it.
 */
export function soapReading(c: Corpus): void {
  const both = (label: string, path: string, op: string, body: (v: 11 | 12) => string) => {
    c.soap11(`reading/soap11/${label}`, path, body(11), action(op));
    c.soap12(`reading/soap12/${label}`, path, body(12));
  };
  const inBody = (label: string, inner: string) => both(label, PUSH, 'GetTokenDevice', (v) => envelope(v, inner));
  const token = (value: string) => tokEl(`<id>${value}</id>`);
  const X = '\u0001';
  const withHeader = (v: 11 | 12, header: string) => envelope(v, token('dev-1001'), { header });

  // ---- characters XML 1.0 does not allow: raw, or as a character reference (Normalization on)
  const values: Array<[string, string]> = [
    ['raw-u0001', `dev-1001${X}`],
    ['raw-u0000', 'dev-1001\u0000'],
    ['raw-u000b', 'dev\u000b1001'],
    ['raw-u001f', 'dev\u001f1001'],
    ['raw-ufffe', 'dev-1001\ufffe'],
    ['raw-uffff', 'dev-1001\uffff'],
    ['allowed-u007f-u0085', 'dev-1001\u007f\u0085'],
    ['ref-decimal-1', 'dev-1001&#1;'],
    ['ref-hex-1', 'dev-1001&#x1;'],
    ['ref-0', 'dev-1001&#0;'],
    ['ref-fffe', 'dev&#xFFFE;'],
    ['ref-d800', 'dev&#xD800;'],
    ['ref-110000', 'dev&#x110000;'],
    ['ref-10000-allowed', 'dev&#x10000;'],
    ['ref-tab-allowed', 'dev-1001&#9;'],
    ['cdata-u0001', `<![CDATA[dev-1001${X}]]>`],
  ];
  for (const [label, value] of values) inBody(`chars/value-${label}`, token(value));
  inBody('chars/param-attribute-raw', tokEl(`<id a="${X}">dev-1001</id>`));
  inBody('chars/param-attribute-ref', tokEl('<id a="&#1;">dev-1001</id>'));
  inBody('chars/comment-in-op', tokEl(`<!--${X}--><id>dev-1001</id>`));
  inBody('chars/ref-in-comment-allowed', tokEl('<!--&#1;--><id>dev-1001</id>'));
  inBody('chars/pi-in-op', tokEl(`<?p ${X}?><id>dev-1001</id>`));
  inBody('chars/parameter-name', tokEl(`<i${X}d>dev-1001</i${X}d>`));
  inBody('chars/after-the-operation', `${token('dev-1001')}<x>${X}</x>`);
  // Before the Body's first element, SOAP 1.2's routing reads it: a fault with the reader's message.
  inBody('chars/body-white-space', ` ${X} ${token('dev-1001')}`);
  both('chars/header-text', PUSH, 'GetTokenDevice', (v) => withHeader(v, `<soap:Header><h xmlns="urn:h">${X}</h></soap:Header>`));
  both('chars/header-u0000', PUSH, 'GetTokenDevice', (v) => withHeader(v, '<soap:Header><h xmlns="urn:h">a\u0000</h></soap:Header>'));
  both('chars/header-ufffe', PUSH, 'GetTokenDevice', (v) => withHeader(v, '<soap:Header><h xmlns="urn:h">a\ufffe</h></soap:Header>'));
  both('chars/header-ref', PUSH, 'GetTokenDevice', (v) => withHeader(v, '<soap:Header><h xmlns="urn:h">a&#1;</h></soap:Header>'));
  both('chars/header-cdata', PUSH, 'GetTokenDevice', (v) =>
    withHeader(v, `<soap:Header><h xmlns="urn:h"><![CDATA[${X}]]></h></soap:Header>`),
  );
  both('chars/header-comment', PUSH, 'GetTokenDevice', (v) => withHeader(v, `<!--${X}--><soap:Header/>`));
  both('chars/header-crlf-lines', PUSH, 'GetTokenDevice', (v) =>
    withHeader(v, `\r\n<soap:Header>\r<h xmlns="urn:h">a${X}</h></soap:Header>`),
  );
  const envelopeTag = (v: 11 | 12, from: string, to: string) => envelope(v, token('dev-1001')).replace(from, to);
  const tags: Array<[string, string, string]> = [
    ['envelope-attribute', '<soap:Envelope ', `<soap:Envelope a="${X}" `],
    ['envelope-attribute-ref', '<soap:Envelope ', '<soap:Envelope a="x&#x1;" '],
    ['element-name-start', '<soap:Body>', `<${X}soap:Body>`],
    ['element-name', '<soap:Body>', `<soap:Bo${X}dy>`],
    ['after-element-name', '<soap:Envelope', `<soap:Envelope${X}`],
    ['between-attributes', '<soap:Envelope ', `<soap:Envelope ${X} `],
    ['attribute-name', 'xmlns:xsi=', `xm${X}lns:xsi=`],
    ['after-equals', 'xmlns:xsi=', `xmlns:xsi=${X}`],
    ['end-tag', '<soap:Body>', `<soap:Header></soap:Header${X}><soap:Body>`],
    ['end-tag-name-start', '<soap:Body>', `<soap:Header></${X}soap:Header><soap:Body>`],
    ['end-tag-name', '<soap:Body>', `<soap:Header></soap:Hea${X}der><soap:Body>`],
    ['pi-target', '<soap:Body>', `<?p${X} x?><soap:Body>`],
    ['pi-value', '<soap:Body>', `<?p x${X}?><soap:Body>`],
    ['comment-start', '<soap:Body>', `<!-${X}--><soap:Body>`],
  ];
  for (const [label, from, to] of tags) both(`chars/${label}`, PUSH, 'GetTokenDevice', (v) => envelopeTag(v, from, to));
  // A mismatched end tag before the Body's first element: the start tag's name and place in the message.
  both('tags/end-tag-mismatch', PUSH, 'GetTokenDevice', (v) => envelopeTag(v, '<soap:Body>', '<soap:Header></soap:HeaderX><soap:Body>'));
  both('tags/end-tag-mismatch-lines', PUSH, 'GetTokenDevice', (v) =>
    envelopeTag(v, '<soap:Body>', '\n<soap:Header>\r\n</soap:Head ><soap:Body>'),
  );
  both('chars/before-the-root', PUSH, 'GetTokenDevice', (v) => X + envelope(v, token('dev-1001'), { decl: '' }));
  both('chars/in-the-declaration', PUSH, 'GetTokenDevice', (v) => envelope(v, token('dev-1001'), { decl: `<?xml version="1.0"${X}?>` }));
  // After the root, ASMX reads one node more and no further.
  const after: Array<[string, string]> = [
    ['right-after', X],
    ['after-white-space', `\n${X}`],
    ['in-a-comment', `<!--${X}-->`],
    ['in-a-second-comment', `<!--a--><!--${X}-->`],
    ['after-white-space-and-a-comment', `\n<!--a-->${X}`],
    ['after-a-processing-instruction', `<?p x?>${X}`],
    ['in-a-processing-instruction', `<?p ${X}?>`],
    ['junk-after-white-space', ' <x'],
    ['a-second-root', '<x/>'],
    ['text', 'x'],
    ['an-unclosed-comment', '<!-- x'],
    ['a-declaration', '<?xml version="1.0"?>'],
    ['a-cdata-section', '<![CDATA[x]]>'],
  ];
  for (const [label, tail] of after) both(`after-root/${label}`, PUSH, 'GetTokenDevice', (v) => envelope(v, token('dev-1001')) + tail);
  // A NUL where XmlTextReader looks for an element at the root level is its end of the document (v1Compat).
  const nul: Array<[string, (v: 11 | 12) => string]> = [
    ['right-after-the-root', (v) => `${envelope(v, token('dev-1001'))}\u0000x`],
    ['after-white-space-after-the-root', (v) => `${envelope(v, token('dev-1001'))} \u0000`],
    ['after-the-declaration', (v) => `${DECL}\u0000${envelope(v, token('dev-1001'), { decl: '' })}`],
    ['after-a-comment-before-the-root', (v) => `<!--c-->\u0000${envelope(v, token('dev-1001'), { decl: '' })}`],
    ['after-white-space-before-the-root', (v) => `${DECL}\n\u0000${envelope(v, token('dev-1001'), { decl: '' })}`],
  ];
  for (const [label, body] of nul) both(`nul/${label}`, PUSH, 'GetTokenDevice', body);
  // `--` inside a comment, or a comment ending `--->` (XmlTextReader's message, at the first `-`)
  both('comments/double-dash-before-the-body', PUSH, 'GetTokenDevice', (v) =>
    envelope(v, token('dev-1001')).replace('<soap:Body>', '<!-- a -- b --><soap:Body>'),
  );
  both('comments/three-dashes-at-the-end', PUSH, 'GetTokenDevice', (v) =>
    envelope(v, token('dev-1001')).replace('<soap:Body>', '<!-- a ---><soap:Body>'),
  );
  both('comments/empty-and-single-dashes', PUSH, 'GetTokenDevice', (v) =>
    envelope(v, token('dev-1001')).replace('<soap:Body>', '<!----><!-- - --><soap:Body>'),
  );

  // ---- the XML declaration (XmlTextReaderImpl.ParseXmlDeclaration)
  const declarations: Array<[string, string]> = [
    ['version-1.1', '<?xml version="1.1"?>'],
    ['version-1.1-encoding', '<?xml version="1.1" encoding="utf-8"?>'],
    ['version-2.0-single-quotes', "<?xml version='2.0'?>"],
    ['version-with-a-space', '<?xml version="1.0 "?>'],
    ['no-version', '<?xml encoding="utf-8"?>'],
    ['nothing', '<?xml?>'],
    ['standalone-maybe', '<?xml version="1.0" standalone="maybe"?>'],
    ['standalone-before-encoding', '<?xml version="1.0" standalone="yes" encoding="utf-8"?>'],
    ['unknown-attribute', '<?xml version="1.0" foo="x"?>'],
    ['version-twice', '<?xml version="1.0" version="1.0"?>'],
    ['no-white-space-between', '<?xml version="1.0"encoding="utf-8"?>'],
    ['white-space-around-equals', '<?xml version = "1.0" ?>'],
    ['space-before-end', '<?xml version="1.0"? >'],
    ['upper-case-target', '<?XML version="1.0"?>'],
    ['white-space-before', ' <?xml version="1.0"?>'],
    ['a-second-declaration', `${DECL}<?xml version="1.0"?>`],
    ['ampersand-in-encoding', '<?xml version="1.0" encoding="utf&8"?>'],
    ['multiline', '<?xml version="1.0"\n  encoding="utf-8"\n  standalone="no"?>\n'],
    ['xml-stylesheet', '<?xml-stylesheet href="a"?>'],
    ['pi-target-not-a-name', '<?&#9;xml version="1.0"?>'],
    ['pi-target-bad-character', '<?p&q x?>'],
  ];
  for (const [label, decl] of declarations)
    both(`declaration/${label}`, PUSH, 'GetTokenDevice', (v) => envelope(v, token('dev-1001'), { decl }));
  inBody('declaration/xml-pi-in-the-body', `<?xml version="1.0"?>${token('dev-1001')}`);

  // ---- a root that is not an Envelope, and a Body out of place
  const roots: Array<[string, string]> = [
    ['soap11-namespace', `<Foo xmlns="${SOAP11}"/>`],
    ['soap12-namespace', `<Foo xmlns="${SOAP12}"/>`],
    ['other-namespace', '<Foo xmlns="urn:x"/>'],
    ['no-namespace', '<Foo/>'],
    ['soap11-with-a-body', `<s:Foo xmlns:s="${SOAP11}"><s:Body>${token('dev-1001')}</s:Body></s:Foo>`],
    ['soap12-with-a-body', `<s:Foo xmlns:s="${SOAP12}"><s:Body>${token('dev-1001')}</s:Body></s:Foo>`],
    ['other-namespace-then-malformed', '<Foo xmlns="urn:x"><'],
    ['soap11-then-malformed', `<Foo xmlns="${SOAP11}"><`],
  ];
  for (const [label, root] of roots) both(`root/${label}`, PUSH, 'GetTokenDevice', () => `${DECL}${root}`);
  for (const [label, root] of roots.slice(0, 2))
    c.soap12(`root/soap12-action/${label}`, PUSH, `${DECL}${root}`, `${CT12}; action="${AP}GetTokenDevice"`);
  both('body/misplaced-after-an-element', PUSH, 'GetTokenDevice', (v) => withHeader(v, '<Foo xmlns="urn:x"/>'));
  both('body/misplaced-after-text', PUSH, 'GetTokenDevice', (v) => withHeader(v, 'junk'));
  both('body/misplaced-after-two-headers', PUSH, 'GetTokenDevice', (v) => withHeader(v, '<soap:Header/><soap:Header/>'));
  both('body/header-after-the-body', PUSH, 'GetTokenDevice', (v) =>
    envelope(v, token('dev-1001')).replace('</soap:Body>', '</soap:Body><soap:Header/>'),
  );

  // ---- parameters holding markup: ReadElementString reads into one child element
  const mixed = [
    '<b>dev-1001</b>',
    '<b>dev-1002</b> ',
    '<b>dev</b>-1001',
    '<b/>dev-1001',
    '<b></b>',
    '<b><c>dev-1001</c></b>',
    '<b>dev-1001<c/></b>',
    ' <b>dev-1001</b>',
    '<b>dev-<!--c-->1001</b>',
    '<b><![CDATA[dev-1001]]></b>',
    '<b>dev-1001</b><id>dev-1002</id>',
    '<b>dev-1001</b><c>x</c>',
    '<x:b xmlns:x="urn:x">dev-1003</x:b>',
  ];
  for (const [i, value] of mixed.entries()) inBody(`markup/id-${i + 1}`, token(value));
  const pis = ['dev-1001<?p x?>', '<?p x?>dev-1001', 'dev-<?p x?>1001', '<b>dev-1001<?p x?></b>'];
  for (const [i, value] of pis.entries()) inBody(`markup/pi-${i + 1}`, token(value));
  const school: Array<[string, string]> = [
    ['url-in-a-child-then-show-active', `<school_base_url><b>${ALNOOR}</b></school_base_url><show_active>49</show_active>`],
    ['show-active-inside-the-url', `<school_base_url><b>${ALNOOR}</b><show_active>49</show_active></school_base_url>`],
    ['show-active-in-a-child', `<school_base_url>${ALNOOR}</school_base_url><show_active><b>49</b></show_active>`],
    ['show-active-in-a-child-bad', `<school_base_url>${ALNOOR}</school_base_url><show_active><b>abc</b></show_active>`],
    ['bad-show-active-before-markup', `<show_active>abc</show_active><school_base_url>x<!--c-->y</school_base_url>`],
    ['bad-show-active-before-a-bad-character', `<show_active>abc</show_active><school_base_url>${X}</school_base_url>`],
    ['markup-before-a-bad-show-active', `<school_base_url>x<!--c-->y</school_base_url><show_active>abc</show_active>`],
    ['empty-show-active-self-closing', `<school_base_url>${ALNOOR}</school_base_url><show_active/>`],
    // The node after a value that does not convert is read before the conversion (ReadElementString's last Read())
    ['bad-show-active-then-a-bad-start-tag', `<school_base_url>x</school_base_url><show_active>abc</show_active><a b> x </a b>`],
    ['bad-show-active-then-white-space-and-a-bad-tag', `<school_base_url>x</school_base_url><show_active>abc</show_active> <a b/>`],
    ['bad-show-active-then-a-good-tag-and-a-bad-one', `<school_base_url>x</school_base_url><show_active>abc</show_active><x>1</x><a b/>`],
    ['bad-show-active-then-a-wrong-end-tag', `<school_base_url>x</school_base_url><show_active>abc</show_active></Wrong>`],
    ['bad-show-active-then-a-bad-comment', `<school_base_url>x</school_base_url><show_active>abc</show_active><!-- a -- b -->`],
    ['bad-show-active-then-an-undeclared-prefix', `<school_base_url>x</school_base_url><show_active>abc</show_active><p:x/>`],
    ['bad-show-active-then-an-undeclared-entity', `<school_base_url>x</school_base_url><show_active>abc</show_active>&bogus;`],
    ['fullwidth-show-active-then-a-bad-tag', `<school_base_url>x</school_base_url><show_active>&#xff14;&#xff19;</show_active><a b/>`],
    ['empty-bad-show-active-then-a-bad-tag', `<school_base_url>x</school_base_url><show_active/><a b/>`],
  ];
  for (const [label, inner] of school) both(`markup/school-${label}`, SCHOOL, 'GetStudentSchool', (v) => envelope(v, schEl(inner)));
  const marks = servicePath(OP.marks);
  both('markup/marks-in-children', marks, 'GetStudentsMarks', (v) =>
    envelope(v, `<GetStudentsMarks xmlns="${NS}"><StudnetID><x>1001</x></StudnetID><SubjectID>2</SubjectID></GetStudentsMarks>`),
  );

  // ---- the Body's shapes: every operation element is read, the first element routes SOAP 1.2
  const shapes: Array<[string, string]> = [
    ['two-operations', token('dev-1001') + token('dev-1002')],
    ['two-operations-second-empty', token('dev-1002') + tokEl('')],
    ['two-operations-second-self-closing', `${token('dev-1002')}<GetTokenDevice xmlns="${NS}"/>`],
    ['two-operations-second-without-the-parameter', token('dev-1002') + tokEl('<x>1</x>')],
    ['three-operations', token('dev-1001') + token('dev-1003') + token('dev-1002')],
    ['unknown-element-then-operation', `<Foo xmlns="${NS}"/>${token('dev-1002')}`],
    ['text-then-operation', `junk${token('dev-1002')}`],
    ['cdata-then-operation', `<![CDATA[x]]>${token('dev-1002')}`],
    ['operation-then-unknown-element', `${token('dev-1002')}<Foo xmlns="${NS}"><id>x</id></Foo>`],
    ['comment-white-space-operation', `<!--c-->\n ${token('dev-1002')}`],
    ['pi-then-operation', `<?p x?>${token('dev-1002')}`],
    ['operation-in-another-namespace-first', `<GetTokenDevice xmlns="urn:x"><id>dev-1003</id></GetTokenDevice>${token('dev-1002')}`],
    ['operation-nested-in-another-element', `<Foo xmlns="${NS}">${token('dev-1003')}</Foo>${token('dev-1002')}`],
  ];
  for (const [label, inner] of shapes) inBody(`shapes/${label}`, inner);
  both('shapes/school-two-operations-merge', SCHOOL, 'GetStudentSchool', (v) =>
    envelope(
      v,
      schEl(`<school_base_url>${ALNOOR}</school_base_url><show_active>48</show_active>`) + schEl('<show_active>49</show_active>'),
    ),
  );
  both('shapes/school-two-operations-bad-first', SCHOOL, 'GetStudentSchool', (v) =>
    envelope(
      v,
      schEl(`<school_base_url>${ALNOOR}</school_base_url><show_active>abc</show_active>`) + schEl('<show_active>49</show_active>'),
    ),
  );

  // ---- Content-Type as System.Web.Services' ContentType reads it
  const body11 = envelope(11, token('dev-1001'));
  const body12 = envelope(12, token('dev-1001'));
  const unknown11 = envelope(11, '<NoSuchOp xmlns="http://tempuri.org/"/>');
  const types11: Array<[string, string]> = [
    ['space-before-semicolon', 'text/xml ; charset=utf-8'],
    ['tab-before-semicolon', 'text/xml\t; charset=utf-8'],
    ['space-no-parameters', 'text/xml ;'],
    ['charset-single-quotes', "text/xml; charset='utf-8'"],
    ['charset-by-prefix', 'text/xml; charsetx=utf-8'],
    ['charset-spaces-around-equals', 'text/xml; charset = utf-8'],
  ];
  for (const [label, type] of types11) c.soap11(`content-type/soap11/${label}`, PUSH, body11, action('GetTokenDevice'), type);
  c.soap11('content-type/soap11/space-unknown-action', PUSH, body11, '"urn:nope"', 'text/xml ; charset=utf-8');
  c.soap11('content-type/soap11/text-plain-unknown-action', PUSH, body11, '"urn:nope"', 'text/plain');
  c.soap11('content-type/no-action/text-plain-unknown-body', PUSH, unknown11, null, 'text/plain');
  c.soap11('content-type/no-action/text-plain-malformed', PUSH, '<a', null, 'text/plain');
  c.soap11('content-type/no-action/space-before-semicolon', PUSH, body11, null, 'text/xml ; charset=utf-8');
  c.soap12('content-type/soap12/space-before-semicolon', PUSH, body12, 'application/soap+xml ; charset=utf-8');
  c.soap12(
    'content-type/soap12/space-unknown-body',
    PUSH,
    envelope(12, '<NoSuchOp xmlns="http://tempuri.org/"/>'),
    'application/soap+xml ; charset=utf-8',
  );
  c.soap12(
    'content-type/soap12/action-single-quotes',
    PUSH,
    envelope(12, '<NoSuchOp xmlns="http://tempuri.org/"/>'),
    `application/soap+xml; action='${AP}GetTokenDevice'`,
  );
  c.soap12(
    'content-type/soap12/action-mixed-quotes',
    PUSH,
    envelope(12, '<NoSuchOp xmlns="http://tempuri.org/"/>'),
    `application/soap+xml; action="${AP}GetTokenDevice'`,
  );
  c.soap12('content-type/soap12/action-malformed-body', PUSH, '<a', `${CT12}; action="${AP}GetTokenDevice"`);
  c.soap11(
    'content-type/soap12-envelope-by-action-malformed',
    PUSH,
    `<soap:Envelope xmlns:soap="${SOAP12}"><soap:Body><a>`,
    action('GetTokenDevice'),
    CT11,
  );
  c.add({
    name: 'content-type/soap11/charset-quoted-utf-16',
    method: 'POST',
    path: SCHOOL,
    headers: { 'Content-Type': `text/xml; charset="utf-16'`, SOAPAction: action('GetStudentSchool') },
    bodyBase64: Buffer.from(
      envelope(11, schEl(`<school_base_url>${ALNOOR}</school_base_url><show_active>49</show_active>`)),
      'utf16le',
    ).toString('base64'),
  });
}
