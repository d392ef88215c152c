import { CT11, CT12, type Corpus, FORM, OP, PUSH, TOKEN_OP, action, envelope, soapOp } from './corpus-kit';

/**
 * The URL rules of issue 39 where the legacy host answers as IIS does: a path is read as http.sys
 * and ASP.NET make it canonical (`//`, `/./`, `/x/../`, escaped dots and slashes, backslashes), a
 * fragment is no part of the URL, the operation name's trailing white space is trimmed, a path over
 * ASP.NET's maxUrlLength is refused, and a form's media type is what precedes the `;`, untrimmed.
 * (What IIS answers where Mono does not, before ASMX is reached, is in test/fidelity.test.ts.)
 */
export function urls(c: Corpus): void {
  const q = '?id=dev-1001';
  const paths: Array<[string, string]> = [
    ['double-slash-before-service', `/${PUSH}/GetTokenDevice${q}`],
    ['triple-slash-before-service', `//${PUSH}/GetTokenDevice${q}`],
    ['dot-segment', `/.${PUSH}/GetTokenDevice${q}`],
    ['dot-dot-segment', `/x/..${PUSH}/GetTokenDevice${q}`],
    ['dot-dot-in-path-info', `${PUSH}/x/../GetTokenDevice${q}`],
    ['escaped-dot-dot', `/x/%2e%2E${PUSH}/GetTokenDevice${q}`],
    ['escaped-slash', `${PUSH}%2FGetTokenDevice${q}`],
    ['backslash', `${PUSH}\\GetTokenDevice${q}`],
    ['escaped-backslash', `${PUSH}%5cGetTokenDevice${q}`],
    ['escaped-letters', `/Push%4EotificationMobile.asmx/Get%54okenDevice${q}`],
    ['fragment', `${TOKEN_OP}${q}#fragment`],
    ['fragment-without-query', '/AboutUs.asmx/GetAboutUs#x'],
    ['operation-trailing-space', '/AboutUs.asmx/GetAboutUs%20'],
  ];
  for (const [label, path] of paths) c.get(`paths/get/${label}`, path);
  c.post('paths/post/double-slash-before-service', `/${TOKEN_OP}`, 'id=dev-1001');
  c.post('paths/post/dot-dot-segment', `/x/..${TOKEN_OP}`, 'id=dev-1001');
  c.soap11('paths/soap11/double-slash-before-service', `/${PUSH}`, envelope(11, soapOp(OP.token, ['dev-1001'])), action('GetTokenDevice'));
  c.soap11('paths/soap11/escaped-dot-dot', `/x/%2E%2E${PUSH}`, envelope(11, soapOp(OP.token, ['dev-1001'])), action('GetTokenDevice'));
  c.soap12('paths/soap12/dot-segment', `/.${PUSH}`, envelope(12, soapOp(OP.token, ['dev-1001'])), CT12);
  c.soap11('paths/soap11/fragment', `${PUSH}#fragment`, envelope(11, soapOp(OP.token, ['dev-1001'])), action('GetTokenDevice'), CT11);
  c.get('paths/wsdl/fragment', '/AboutUs.asmx?wsdl#x', { kind: 'page' });
  c.get('paths/disco/escaped-letters', '/x/../About%55s.asmx?disco', { kind: 'page' });
  // ASP.NET's maxUrlLength (260): the whole path, however short its segments (a 400, the runtime error page).
  c.get('paths/get/over-max-url-length', `/AboutUs.asmx/${'ab/'.repeat(90)}GetAboutUs`, { kind: 'error' });

  // HtmlFormParameterReader: ContentType.MatchesBase compares what precedes the `;` as it is.
  const token = 'id=dev-1001';
  c.post('forms/content-type/space-before-semicolon', TOKEN_OP, token, `${FORM} ; charset=utf-8`);
  c.post('forms/content-type/tab-before-semicolon', TOKEN_OP, token, `${FORM}\t; x=y`);
  c.post('forms/content-type/upper-case-no-space', TOKEN_OP, token, `${FORM.toUpperCase()};charset=utf-8`);
  c.post('forms/content-type/space-after-semicolon', TOKEN_OP, token, `${FORM}; charset=utf-8`);
}
