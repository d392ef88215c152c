import { CT11, type Corpus, OP, PUSH, SERVICES, TOKEN_OP, action, envelope, servicePath, tokOp } from './corpus-kit';

/**
 * ASP.NET request validation (issue 38 point 2, issue 39): which collection is read and validated
 * where, which values count as dangerous, and how the message quotes the name and the value (joined
 * by commas, HTML-encoded). Mono quotes a value over 18 characters, or one with NULs, its own way
 * (src/shadow/mono-quote.ts reads it); .NET's exact quote of those is held by test/fidelity.test.ts.
 */
export function requestValidation(c: Corpus): void {
  const T = TOKEN_OP;
  const e = encodeURIComponent;
  const pairs: Array<[string, string]> = [
    // repeated names: the values joined, whichever of them is dangerous; the name as first spelled
    ['repeated-second-dangerous', 'id=dev-1001&id=%26%23x41%3B'],
    ['repeated-first-dangerous', 'id=%26%23x41%3B&id=dev-1001'],
    ['repeated-empty-first', 'id=&id=%3Cb'],
    ['repeated-name-case-upper-first', 'ID=%3Cb&id=x'],
    ['repeated-name-case-lower-first', 'id=x&ID=%3Cb'],
    ['names-in-first-seen-order', 'a=x&b=%3Cc&a=%3Cd'],
    ['another-name', 'a=%3Cb&id=dev-1001'],
    ['trailing-ampersand', 'id=%3Cb&'],
    // HTML encoding: Latin-1 as references, other scripts and surrogate pairs as they are
    ['latin1', 'id=%C3%A9%3Ca'],
    ['latin1-range-ends', `id=${e('\u00a0\u00ff\u0100\u009f<b')}`],
    ['arabic', `id=${e('عربي<b')}`],
    ['emoji', `id=${e('😀<b')}`],
    ['quotes', `id=${e(`'<b"`)}`],
    ['eighteen-characters', `id=${e('abcdefghij<b012345')}`],
    // what is dangerous: `<` and a letter or `!`; `&#`; nothing at the end of a value
    ['lt-upper', 'id=%3CB'],
    ['lt-bang', 'id=%3C!'],
    ['amp-hash-alone', 'id=%26%23'],
    ['amp-hash-inside', `id=${e('x&#y')}`],
    ['lt-at-end', 'id=x%3C'],
    ['amp-at-end', 'id=x%26'],
    ['lt-digit', 'id=%3C1'],
    ['lt-latin1-letter', 'id=%3C%C3%A9'],
    ['lt-arabic-letter', `id=${e('<ب')}`],
    ['amp-letter', `id=${e('&x;')}`],
  ];
  for (const [label, q] of pairs) {
    c.get(`validation/get/${label}`, `${T}?${q}`);
    c.post(`validation/post/${label}`, T, q);
  }
  // Quoted by Mono its own way, read by the comparison as agreeing with .NET's quote.
  c.get('validation/get/long-100', `${T}?id=%3Cimg${'x'.repeat(96)}`);
  c.post('validation/post/long-1000', T, `id=${e(`<img src=x onerror=alert(1)>${'A'.repeat(972)}`)}`);
  c.get('validation/get/long-window-inside', `${T}?id=${'a'.repeat(30)}%3Cb${'z'.repeat(30)}`);
  c.get('validation/get/nul', `${T}?id=%3C%00b`);
  // A query segment without `=` is a value without a name (Mono's form parser makes it a name instead).
  c.get('validation/get/no-name', `${T}?%3Cb`);
  c.get('validation/get/no-name-joined', `${T}?x&%3Cb&y`);
  c.get('validation/get/no-name-trailing-ampersand', `${T}?%3Cb&`);
  // Only the collection the protocol reads is validated, and only when it reads one.
  c.post('validation/post/query-not-read', `${T}?id=%3Cb`, 'id=dev-1001');
  c.post('validation/post/form-read-query-not', `${T}?a=%3Cb`, 'id=%3Cc');
  c.get('validation/get/method-without-parameters', `${servicePath(OP.about)}/GetAboutUs?a=%3Cb`);
  c.post('validation/post/method-without-parameters', `${servicePath(OP.about)}/GetAboutUs`, 'a=%3Cb');
  c.get('validation/get/unknown-method-first', `${PUSH}/NoSuchOp?id=%3Cb`);
  c.soap11('validation/soap11/query-not-read', `${PUSH}?id=%3Cb`, envelope(11, tokOp()), action('GetTokenDevice'), CT11);
  // The service page reads the query string to decide (?wsdl, ?disco): refused, ASP.NET's error page.
  for (const s of SERVICES) c.get(`pages/${s}/dangerous-query`, `/${s}.asmx?x=%3Cb`, { kind: 'error' });
  c.get('pages/dangerous-wsdl', `${PUSH}?wsdl&x=%3Cb`, { kind: 'error' });
  c.get('pages/dangerous-op', `${PUSH}?op=%3Cb`, { kind: 'error' });
  c.get('pages/dangerous-no-name', `${PUSH}?%3Cb`, { kind: 'error' });
  c.get('pages/dangerous-amp-hash', `${PUSH}?op=GetTokenDevice&x=%26%23`, { kind: 'error' });
}
