import {
  ALNOOR,
  ARABIC_SCHOOL,
  AUTH_OP,
  BIG,
  CT11,
  type Corpus,
  FORM,
  OP,
  OPS,
  PUSH,
  RAFIDAIN,
  SCHOOL_OP,
  SERVICES,
  TOKEN_OP,
  servicePath,
} from './corpus-kit';

/**
 * Every operation on every binding with normal and edge data, HTTP GET and POST as ASP.NET reads
 * them, and the service pages.
 */

/** Each operation on SOAP 1.1, SOAP 1.2, GET and POST, with normal and edge data. */
export function everyOperation(c: Corpus): void {
  const { auth, marks, about, school, token, serverKey } = OP;
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
}

/** HTTP GET and POST: parameters, names, encodings, media types. */
export function httpGetAndPost(c: Corpus): void {
  const { auth, about } = OP;
  const A = AUTH_OP;
  const S = SCHOOL_OP;
  const T = TOKEN_OP;
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
  c.get(
    'http-get/arabic-school-raw-percent-lower',
    `${S}?school_base_url=${encodeURIComponent(ARABIC_SCHOOL).toLowerCase()}&show_active=1`,
  );
  c.post('http-post/method-wrong-case', `${PUSH}/gettokendevice`, 'id=dev-1001');
  c.post('http-post/method-unknown', `${PUSH}/NoSuchOp`, 'id=dev-1001');
  c.post('http-post/query-params-only', `${T}?id=dev-1001`, '');
  c.post('http-post/query-and-form', `${T}?id=dev-1002`, 'id=dev-1001');
  c.post('http-post/charset-utf8', T, 'id=dev-1001', `${FORM}; charset=utf-8`);
  c.post(
    'http-post/charset-utf8-arabic',
    S,
    `school_base_url=${encodeURIComponent(ARABIC_SCHOOL)}&show_active=1`,
    `${FORM}; charset=utf-8`,
  );
  c.post('http-post/charset-iso-8859-1', T, 'id=dev-1001', `${FORM}; charset=iso-8859-1`);
  c.post('http-post/ct-upper-case', T, 'id=dev-1001', 'APPLICATION/X-WWW-FORM-URLENCODED');
  c.post('http-post/ct-text-plain', T, 'id=dev-1001', 'text/plain');
  c.post('http-post/ct-json', T, '{"id":"dev-1001"}', 'application/json');
  c.post('http-post/ct-text-xml', T, 'id=dev-1001', CT11);
  c.post(
    'http-post/ct-multipart',
    T,
    '--b\r\nContent-Disposition: form-data; name="id"\r\n\r\ndev-1001\r\n--b--\r\n',
    'multipart/form-data; boundary=b',
  );
  c.post('http-post/ct-none', T, 'id=dev-1001', null);
  c.post('http-post/ct-none-empty-body', `${servicePath(about)}/GetAboutUs`, '', null);
  c.post('http-post/ct-text-plain-no-params', `${servicePath(about)}/GetAboutUs`, '', 'text/plain');
  c.post('http-post/raw-arabic-form', S, `school_base_url=${ARABIC_SCHOOL}&show_active=1`);
  c.post('http-post/trailing-ampersand', T, 'id=dev-1001&');
  c.post('http-post/newline-in-form', T, 'id=dev-1001\r\n');
}

/** ?wsdl, ?disco and the help pages of every service. */
export function servicePages(c: Corpus): void {
  for (const s of SERVICES) {
    const p = `/${s}.asmx`;
    for (const q of ['wsdl', 'WSDL', 'Wsdl', 'disco', 'DISCO']) c.get(`pages/${s}/${q}`, `${p}?${q}`, { kind: 'page' });
    c.get(`pages/${s}/wsdl-path-case`, `${p.toLowerCase()}?wsdl`, { kind: 'page', legacyPath: `${p}?wsdl` });
    c.get(`pages/${s}/help`, p, { kind: 'help' });
    for (const o of OPS.filter((x) => x.service === s)) c.get(`pages/${s}/help-op-${o.name}`, `${p}?op=${o.name}`, { kind: 'help' });
    c.get(`pages/${s}/help-op-unknown`, `${p}?op=NoSuchOp`, { kind: 'help' });
  }
  c.get('pages/help-other-query', `/AboutUs.asmx?foo=bar`, { kind: 'help' });
}
