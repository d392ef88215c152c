import fs from 'node:fs';
import path from 'node:path';
import { ENDPOINTS, findEndpoint, soapActionOf } from '../contract/operations';
import { projectRoot } from '../basics/paths';
import { escapeMarkup } from '../basics/escape';
import { PROTOCOLS, type Protocol } from '../config';

const NAMESPACE_PLACEHOLDER = '{xml_namespace}';
const BASE_URL_PLACEHOLDER = '{base_url}';
/** What precedes the operation name in each soapAction: the namespace, with a `/` if it lacks one. */
const ACTION_PREFIX_PLACEHOLDER = '{soap_action_prefix}';

/**
 * The five service descriptions, read once at start. Each file is the legacy host's WSDL with the
 * namespace written `{xml_namespace}` (`{soap_action_prefix}` before each operation's name in a
 * soapAction) and each address `{base_url}/<Endpoint>.asmx`. The namespace is
 * fixed for the process, so it is substituted here; what remains per request is the address, which
 * follows the URL the client used.
 */
export class WsdlCatalog {
  /** Per endpoint, the document split at its addresses: text() joins the pieces with the URL. */
  private readonly pieces = new Map<string, readonly string[]>();

  constructor(
    xmlNamespace: string,
    wsdlDir: string = path.join(projectRoot, 'wsdl'),
    protocols: ReadonlySet<Protocol> = new Set(PROTOCOLS),
  ) {
    const ns = escapeMarkup(xmlNamespace);
    const actionPrefix = escapeMarkup(soapActionOf(xmlNamespace, ''));
    for (const { name } of ENDPOINTS) {
      const file = path.join(wsdlDir, `${name}.wsdl`);
      let template: string;
      try {
        template = forProtocols(fs.readFileSync(file, 'utf8'), name, protocols);
      } catch (err) {
        throw new Error(`Cannot read the service description of ${name} at ${file}: ${(err as Error).message}`);
      }
      // Split before substituting so that a namespace which happens to contain the address
      // placeholder cannot be taken for an address.
      const parts = template.split(`${BASE_URL_PLACEHOLDER}/${name}.asmx`);
      if (parts.length < 2) throw new Error(`${file} has no address "${BASE_URL_PLACEHOLDER}/${name}.asmx"`);
      if (parts.some((p) => p.includes(BASE_URL_PLACEHOLDER))) {
        throw new Error(`${file} uses ${BASE_URL_PLACEHOLDER} other than as "${BASE_URL_PLACEHOLDER}/${name}.asmx"`);
      }
      this.pieces.set(
        name,
        parts.map((p) => p.split(ACTION_PREFIX_PLACEHOLDER).join(actionPrefix).split(NAMESPACE_PLACEHOLDER).join(ns)),
      );
    }
  }

  /** The WSDL of `endpoint` whose addresses are `serviceUrl` (the full URL of the .asmx). */
  text(endpoint: string, serviceUrl: string): string {
    const name = this.pieces.has(endpoint) ? endpoint : findEndpoint(endpoint)?.name;
    const parts = name === undefined ? undefined : this.pieces.get(name);
    if (parts === undefined) throw new Error(`No service description for endpoint "${endpoint}"`);
    return parts.join(escapeMarkup(serviceUrl));
  }
}

/** A binding's suffix in the WSDL's names (`XSoap12`, `OpHttpGetIn`) and the protocol that enables it. */
const SUFFIXES: readonly (readonly [string, Protocol])[] = [
  ['Soap12', 'HttpSoap12'],
  ['Soap', 'HttpSoap'],
  ['HttpGet', 'HttpGet'],
  ['HttpPost', 'HttpPost'],
];

/**
 * The description as ASMX writes it for the enabled protocols: a binding and its port exist only for
 * an enabled protocol; messages and port types are shared by both SOAP versions, and when only SOAP 1.2
 * is on they take its name (`OpSoap12In`, `XSoap12`); without SOAP there are no wrapper elements
 * either, nor the char type only their parameters use.
 */
function forProtocols(template: string, endpoint: string, protocols: ReadonlySet<Protocol>): string {
  const soap11 = protocols.has('HttpSoap');
  const soap = soap11 || protocols.has('HttpSoap12');
  const element = /^ *<wsdl:(message|portType|binding|port) name="([^"]+)"[^>]*?(?:\/>|>[\s\S]*?<\/wsdl:\1>)\r?\n/gm;
  let text = template.replace(element, (whole, tag: string, name: string) => {
    // Messages are named after the operation, the rest after the endpoint.
    const suffix = tag === 'message' ? name.replace(/(In|Out)$/, '') : name.slice(endpoint.length);
    const found = SUFFIXES.find(([s]) => suffix.endsWith(s));
    if (found === undefined) return whole;
    const [s, protocol] = found;
    const shared = s === 'Soap' && (tag === 'message' || tag === 'portType');
    return (shared ? soap : protocols.has(protocol)) ? whole : '';
  });
  if (!protocols.has('HttpGet') && !protocols.has('HttpPost')) {
    // The top-level elements HTTP GET/POST answer with (string, ArrayOf...) are exported only by their
    // reflectors (MimeXmlReflector.ReflectReturn); HttpPostLocalhost's never runs for ?wsdl.
    text = text.replace(/^ {6}<s:element [^>]*\/>\r?\n/gm, '');
  }
  if (!soap) {
    // The operations' wrapper elements are SOAP's; what HTTP answers with (string, ArrayOf...) stays.
    const operations = findEndpoint(endpoint)?.operations.flatMap((op) => [op.name, `${op.name}Response`]) ?? [];
    const wrapper = new RegExp(`^      <s:element name="(?:${operations.join('|')})"(?: />|>[\\s\\S]*?\\n      </s:element>)\\r?\\n`, 'gm');
    // The char type (http://microsoft.com/wsdl/types/) is only a SOAP parameter's: HTTP's are strings.
    const charTypes =
      /^ *<s:import namespace="http:\/\/microsoft\.com\/wsdl\/types\/" \/>\r?\n|^ *<s:schema [^>]*targetNamespace="http:\/\/microsoft\.com\/wsdl\/types\/">[\s\S]*?<\/s:schema>\r?\n/gm;
    text = text.replace(wrapper, '').replace(charTypes, '');
    // Then HTTP's return elements are the schema's first content: MimeXmlReflector exports each element
    // before the types it names (with SOAP, the wrappers came first and the types with them).
    const returns = text.match(/^ {6}<s:element [^>]*\/>\r?\n/gm) ?? [];
    text = text
      .replace(/^ {6}<s:element [^>]*\/>\r?\n/gm, '')
      .replace(/(<s:schema [^>]*>\r?\n)/, (open: string) => open + returns.join(''))
      .replace(/<wsdl:types>\s*<s:schema [^>]*>\s*<\/s:schema>\s*<\/wsdl:types>/, '<wsdl:types />');
  } else if (!soap11) {
    text = text
      .replace(/Soap(In|Out)"/g, 'Soap12$1"')
      .split(`name="${endpoint}Soap"`)
      .join(`name="${endpoint}Soap12"`)
      .split(`type="tns:${endpoint}Soap"`)
      .join(`type="tns:${endpoint}Soap12"`);
  }
  return text;
}
