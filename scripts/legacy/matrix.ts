import { buildCorpus, buildProtocolCorpus } from './corpus';
import type { Case } from './corpus-kit';

/**
 * The site configurations the legacy comparison runs: each is a legacy host started the same way
 * (`start.sh PORT VDIR` with XML_NAMESPACE and PROTOCOLS) and our service with the same XML_NAMESPACE,
 * PROTOCOLS and BASE_PATH. Recorded by `npm run record-legacy` into test/fixtures/legacy/NAME.json,
 * replayed by test/legacy-matrix.test.ts.
 *
 * Why these twelve cover the sites there are: a configuration has three settings, and each acts on its
 * own part of an answer. The namespace names the XML (operation elements, faults' detail, the WSDL's
 * target namespace) and makes the SOAPAction (`ns` + `Op` when it ends in `/`, else `ns/Op`, in routing,
 * the WSDL and the help pages): three forms, a URL with the slash, a URL without, a URN. The site (root
 * or a virtual directory) is only in addresses: the WSDL's and disco's locations, the help pages' links,
 * the runtime error page's application path. The protocols decide which handler answers a request and
 * what the WSDL and help pages offer: all on, each of the five off alone, SOAP only, HTTP only, SOAP 1.1
 * with POST, SOAP 1.1 with GET, and the .NET Framework's own default (machine.config's HttpSoap12,
 * HttpSoap, HttpPostLocalhost, Documentation, which a web.config without `<protocols>` gets).
 * So every namespace form meets both sites (the six pairs), every namespace form meets protocols
 * switched off, and every protocol setting is met once, with its WSDL and pages under that namespace and
 * site. The full corpus (every request form) runs on four configurations, one per namespace form and
 * with both sites among them; the protocol corpus (each binding, its routing variants, the pages, and
 * with a namespace without `/` every SOAPAction form) on the rest.
 *
 * To add one: a line here, `npm run record-legacy -- --only NAME`, commit the new recording; the replay
 * picks it up.
 */
export interface Configuration {
  name: string;
  /** XML_NAMESPACE, as the .asmx files' [WebService(Namespace=...)] say it. */
  namespace: string;
  /** PROTOCOLS, as web.config's `<protocols>` lists them (after `<clear />`). */
  protocols: string;
  /** The application's virtual directory ('' for the site root): the legacy host's VDIR, our BASE_PATH. */
  virtualDir: string;
  corpus: 'full' | 'protocols';
}

const TEMPURI = 'http://tempuri.org/';
const NO_SLASH = 'http://school.example/StudentInfo';
const URN = 'urn:school-example:student-info';
const VDIR = '/StudentService';
const ALL = 'HttpSoap,HttpSoap12,HttpGet,HttpPost,Documentation';
/** machine.config's `<protocols>`: what a web.config that does not list them gets. */
const NET_DEFAULT = 'HttpSoap12,HttpSoap,HttpPostLocalhost,Documentation';
const without = (p: string) =>
  ALL.split(',')
    .filter((x) => x !== p)
    .join(',');

export const MATRIX: Configuration[] = [
  // the full corpus, one per namespace form, both sites among them
  { name: 'root-tempuri-all', namespace: TEMPURI, protocols: ALL, virtualDir: '', corpus: 'full' },
  { name: 'vdir-urn-all', namespace: URN, protocols: ALL, virtualDir: VDIR, corpus: 'full' },
  // the kind of site issue 23's held-out check missed: no trailing slash, web.config turning bindings off
  { name: 'root-noslash-soap11-get', namespace: NO_SLASH, protocols: 'HttpSoap,HttpGet', virtualDir: '', corpus: 'full' },
  { name: 'vdir-noslash-netdefault', namespace: NO_SLASH, protocols: NET_DEFAULT, virtualDir: VDIR, corpus: 'full' },
  // each protocol off alone, the namespace forms and sites spread over them
  { name: 'root-noslash-no-soap11', namespace: NO_SLASH, protocols: without('HttpSoap'), virtualDir: '', corpus: 'protocols' },
  { name: 'vdir-tempuri-no-soap12', namespace: TEMPURI, protocols: without('HttpSoap12'), virtualDir: VDIR, corpus: 'protocols' },
  { name: 'root-urn-no-get', namespace: URN, protocols: without('HttpGet'), virtualDir: '', corpus: 'protocols' },
  { name: 'vdir-noslash-no-post', namespace: NO_SLASH, protocols: without('HttpPost'), virtualDir: VDIR, corpus: 'protocols' },
  { name: 'root-tempuri-no-documentation', namespace: TEMPURI, protocols: without('Documentation'), virtualDir: '', corpus: 'protocols' },
  // SOAP only, HTTP only, SOAP 1.1 with POST
  { name: 'vdir-urn-soap-only', namespace: URN, protocols: 'HttpSoap,HttpSoap12', virtualDir: VDIR, corpus: 'protocols' },
  { name: 'root-urn-http-only', namespace: URN, protocols: 'HttpGet,HttpPost,Documentation', virtualDir: '', corpus: 'protocols' },
  { name: 'root-tempuri-soap11-post', namespace: TEMPURI, protocols: 'HttpSoap,HttpPost', virtualDir: '', corpus: 'protocols' },
];

/** The requests a configuration's recording holds, in order. */
export function casesOf(config: Configuration): Case[] {
  return config.corpus === 'full' ? buildCorpus(config.namespace) : buildProtocolCorpus(config.namespace);
}

/** Our service's settings for a configuration. */
export function envOf(config: Configuration): Record<string, string> {
  return { XML_NAMESPACE: config.namespace, PROTOCOLS: config.protocols, ...(config.virtualDir ? { BASE_PATH: config.virtualDir } : {}) };
}

export const has = (config: Configuration, protocol: string): boolean => config.protocols.split(',').includes(protocol);
