import { everyOperation, httpGetAndPost, servicePages } from './corpus-bindings';
import { faults, showActive } from './corpus-faults';
import { fidelity } from './corpus-fidelity';
import { type Case, Corpus, envelope, SERVICES } from './corpus-kit';
import { lenientParsing, soapRouting } from './corpus-soap';

export type { Case } from './corpus-kit';

/**
 * The corpus the legacy comparison puts to both hosts (689 requests), in the order
 * test/fixtures/corpus.json recorded them: test/compare-legacy.test.ts holds the two to each other.
 */
export function buildCorpus(): Case[] {
  const c = new Corpus();
  everyOperation(c);
  soapRouting(c);
  lenientParsing(c);
  showActive(c);
  faults(c);
  httpGetAndPost(c);
  servicePages(c);
  fidelity(c);
  return c.cases;
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
