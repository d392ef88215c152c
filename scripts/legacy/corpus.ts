import { everyOperation, httpGetAndPost, servicePages } from './corpus-bindings';
import { faults, showActive } from './corpus-faults';
import { fidelity } from './corpus-fidelity';
import { type Case, Corpus, TEMPURI, withNamespace } from './corpus-kit';
import { actionForms, protocolCases } from './corpus-site';
import { soapReading } from './corpus-reading';
import { lenientParsing, soapRouting } from './corpus-soap';
import { requestValidation } from './corpus-validation';
import { urls } from './corpus-urls';

export type { Case } from './corpus-kit';

/**
 * The full corpus the legacy comparison puts to both hosts, for a service namespace `ns` (1136
 * requests under the default namespace; a namespace without a trailing slash adds the SOAPAction
 * forms it allows). test/legacy-matrix.test.ts holds it to the recordings, case for case.
 */
export function buildCorpus(ns = TEMPURI): Case[] {
  return withNamespace(ns, () => {
    const c = new Corpus();
    everyOperation(c);
    soapRouting(c);
    lenientParsing(c);
    showActive(c);
    faults(c);
    httpGetAndPost(c);
    servicePages(c);
    fidelity(c);
    requestValidation(c);
    urls(c);
    soapReading(c);
    if (!ns.endsWith('/')) actionForms(c);
    return c.cases;
  });
}

/** The protocol corpus: each binding and the service pages, for a configuration that switches protocols off. */
export function buildProtocolCorpus(ns = TEMPURI): Case[] {
  return withNamespace(ns, () => {
    const c = new Corpus();
    protocolCases(c);
    if (!ns.endsWith('/')) actionForms(c);
    return c.cases;
  });
}
