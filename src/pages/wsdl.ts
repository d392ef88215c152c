import fs from 'node:fs';
import path from 'node:path';
import { ENDPOINTS, findEndpoint, soapActionOf } from '../services/contract';
import { projectRoot } from '../paths';
import { escapeMarkup } from '../escape';

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

  constructor(xmlNamespace: string, wsdlDir: string = path.join(projectRoot, 'wsdl')) {
    const ns = escapeMarkup(xmlNamespace);
    const actionPrefix = escapeMarkup(soapActionOf(xmlNamespace, ''));
    for (const { name } of ENDPOINTS) {
      const file = path.join(wsdlDir, `${name}.wsdl`);
      let template: string;
      try {
        template = fs.readFileSync(file, 'utf8');
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
      this.pieces.set(name, parts.map((p) => p.split(ACTION_PREFIX_PLACEHOLDER).join(actionPrefix).split(NAMESPACE_PLACEHOLDER).join(ns)));
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
