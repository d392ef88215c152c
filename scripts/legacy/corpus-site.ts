import {
  AP,
  CT11,
  CT12,
  type Corpus,
  DECL,
  FORM,
  NS,
  OP,
  PUSH,
  SERVICES,
  SOAP11,
  SOAP12,
  TEMPURI,
  action,
  actionUri,
  envelope,
  opElement,
  soapOp,
  tokOp,
} from './corpus-kit';

/**
 * The cases that depend on the site's configuration rather than on one request's details: the
 * SOAPAction forms of a namespace without a trailing slash, and what each binding answers when
 * web.config's `<protocols>` turns it off (the protocol corpus every configuration of the matrix runs).
 */

/**
 * A namespace without a trailing slash (`http://school.example/StudentInfo`, `urn:school:v1`): .NET
 * writes and routes the SOAPAction `namespace/Operation`; the forms a client (or a proxy rewriting the
 * header) may send instead: without the slash, the slash escaped, quoted or not, another service's.
 */
export function actionForms(c: Corpus): void {
  const { auth, token, serverKey } = OP;
  const tok11 = envelope(11, tokOp());
  const tok12 = envelope(12, tokOp());
  const joined = `${NS}GetTokenDevice`;
  const forms: Array<[string, string]> = [
    ['with-slash', action('GetTokenDevice')],
    ['with-slash-unquoted', actionUri('GetTokenDevice')],
    ['without-slash', `"${joined}"`],
    ['without-slash-unquoted', joined],
    ['escaped-slash', `"${NS}%2FGetTokenDevice"`],
    ['escaped-slash-lower', `"${NS}%2fGetTokenDevice"`],
    ['escaped-slash-unquoted', `${NS}%2FGetTokenDevice`],
    ['escaped-colon-and-slashes', `"${encodeURIComponent(AP)}GetTokenDevice"`],
    ['double-slash', `"${NS}//GetTokenDevice"`],
    ['namespace-only', `"${NS}"`],
    ['namespace-and-slash', `"${AP}"`],
    ['other-operation-same-service', action('GetServerKeyAndSender')],
    ['other-service-operation', action('AuthCode')],
    ['default-namespace', `"${actionUri('GetTokenDevice', TEMPURI)}"`],
    ['namespace-upper-case', `"${actionUri('GetTokenDevice', NS.toUpperCase())}"`],
  ];
  for (const [label, a] of forms) c.soap11(`namespace/soap11/action-${label}`, PUSH, tok11, a);
  c.soap11('namespace/soap11/key-body-action-with-slash', PUSH, envelope(11, soapOp(serverKey, [])), action('GetServerKeyAndSender'));
  c.soap11('namespace/soap11/key-body-action-without-slash', PUSH, envelope(11, soapOp(serverKey, [])), `"${NS}GetServerKeyAndSender"`);
  c.soap11('namespace/soap11/no-action-body-routed', PUSH, tok11, null);
  c.soap11('namespace/soap11/no-action-other-service-body', PUSH, envelope(11, soapOp(auth, ['1', '2'])), null);
  c.soap11(
    'namespace/soap11/body-in-default-namespace',
    PUSH,
    envelope(11, tokOp().replace(`xmlns="${NS}"`, `xmlns="${TEMPURI}"`)),
    action('GetTokenDevice'),
  );
  const ct12 = (a: string) => `${CT12}; action="${a}"`;
  const unknown12 = envelope(12, opElement('NoSuchOp', [['id', 'dev-1001']]));
  c.soap12('namespace/soap12/action-with-slash', PUSH, tok12, ct12(actionUri('GetTokenDevice')));
  c.soap12('namespace/soap12/action-with-slash-unquoted', PUSH, tok12, `${CT12}; action=${actionUri('GetTokenDevice')}`);
  c.soap12('namespace/soap12/action-without-slash-body-known', PUSH, tok12, ct12(joined));
  c.soap12('namespace/soap12/action-without-slash-body-unknown', PUSH, unknown12, ct12(joined));
  c.soap12('namespace/soap12/action-with-slash-body-unknown', PUSH, unknown12, ct12(actionUri('GetTokenDevice')));
  c.soap12('namespace/soap12/action-escaped-slash-body-unknown', PUSH, unknown12, ct12(`${NS}%2FGetTokenDevice`));
  c.soap12('namespace/soap12/action-other-service-body-unknown', PUSH, unknown12, ct12(actionUri('AuthCode')));
  c.soap12('namespace/soap12/no-action', PUSH, tok12);
  c.soap12('namespace/soap12/with-soapaction-header-without-slash', PUSH, tok12, CT12, { SOAPAction: `"${joined}"` });
  c.get('namespace/get', `${PUSH}/${token.name}?id=dev-1001`);
  c.soap11('namespace/soap11/as-text-xml-soap12-body', PUSH, tok12, action('GetTokenDevice'), CT11);
}

/**
 * The same requests under every `<protocols>` setting: each binding and its routing variants, and the
 * service pages, for an operation with a parameter and one without.
 */
export function protocolCases(c: Corpus): void {
  const ops = [
    { o: OP.token, soap: ['dev-1001'], form: 'id=dev-1001' },
    { o: OP.about, soap: [], form: '' },
  ];
  for (const { o, soap, form } of ops) {
    const p = `/${o.service}.asmx`;
    const name = (s: string) => `protocols/${o.service}/${s}`;
    const body11 = envelope(11, soapOp(o, soap));
    const body12 = envelope(12, soapOp(o, soap));
    c.soap11(name('soap11'), p, body11, action(o.name));
    c.soap11(name('soap11-no-soapaction'), p, body11, null);
    c.soap11(name('soap11-unknown-soapaction'), p, body11, '"urn:nothing"');
    c.soap12(name('soap12'), p, body12);
    c.soap12(name('soap12-action'), p, body12, `${CT12}; action="${actionUri(o.name)}"`);
    c.soap11(name('soap12-as-text-xml-with-soapaction'), p, body12, action(o.name));
    c.get(name('get'), `${p}/${o.name}${form ? `?${form}` : ''}`);
    c.get(name('get-unknown-op'), `${p}/NoSuchOp`);
    c.post(name('post'), `${p}/${o.name}`, form, FORM);
    c.post(name('post-unknown-op'), `${p}/NoSuchOp`, '');
    for (const q of ['wsdl', 'WSDL', 'disco']) c.get(name(q), `${p}?${q}`, { kind: 'page' });
    c.get(name('help'), p, { kind: 'help' });
    c.get(name('help-op'), `${p}?op=${o.name}`, { kind: 'help' });
  }
  // a root that is not an Envelope: the version mismatch is answered in the version switched on
  const push = `/${OP.token.service}.asmx`;
  for (const [label, root] of [
    ['other-namespace', '<Foo xmlns="urn:x"/>'],
    ['soap11-namespace', `<Foo xmlns="${SOAP11}"/>`],
    ['soap12-namespace', `<Foo xmlns="${SOAP12}"/>`],
  ]) {
    c.soap12(`protocols/root/${label}`, push, `${DECL}${root}`);
    c.soap11(`protocols/root/${label}-with-soapaction`, push, `${DECL}${root}`, action(OP.token.name));
  }
  // the other services' documents: each names its own operations and bindings
  for (const s of SERVICES.filter((x) => !ops.some(({ o }) => o.service === x)))
    c.get(`protocols/${s}/wsdl`, `/${s}.asmx?wsdl`, { kind: 'page' });
}
