import type { Request, Response } from '../transport/types';
import { send, sendErrorText } from '../bindings/send';
import { urlDecode } from '../basics/url-decode';
import type { Config } from '../config';
import type { EndpointSpec } from '../contract/operations';
import { targetOf } from '../contract/url';
import { discoDocument } from './disco';
import { methodNotFoundPage, operationHelpPage, serviceHelpPage } from './help';
import { serviceUrl } from './public-url';
import { isLocalCaller } from '../transport/context';
import type { WsdlCatalog } from './wsdl';

export type ServicePageHandler = (endpoint: EndpointSpec, req: Request, res: Response) => void;

/** A query string as ASP.NET's HttpValueCollection reads it: a valueless item has the name null. */
type QueryItems = readonly (readonly [name: string | null, value: string])[];

/** The query string's items (without its fragment: http.sys drops it). */
function parseQuery(query: string): QueryItems {
  const items: (readonly [string | null, string])[] = [];
  for (const segment of query.split('&')) {
    const eq = segment.indexOf('=');
    items.push(eq < 0 ? [null, urlDecode(segment)] : [urlDecode(segment.slice(0, eq)), urlDecode(segment.slice(eq + 1))]);
  }
  // `?` alone yields no item, but a trailing or doubled `&` yields an empty valueless one, as in ASP.NET.
  return query === '' ? [] : items;
}

/** QueryString[name]: names compared without regard to case, repeated values joined by commas. */
function queryValue(items: QueryItems, name: string | null): string | undefined {
  const lower = name?.toLowerCase() ?? null;
  const values = items.filter(([n]) => (n === null || lower === null ? n === lower : n.toLowerCase() === lower)).map(([, v]) => v);
  return values.length === 0 ? undefined : values.join(',');
}

function reply(res: Response, status: number, contentType: string, body: string): void {
  send(res, status, { 'Cache-Control': 'private, max-age=0', 'Content-Type': contentType }, body);
}

/** A discovery request that cannot be answered. */
function discoveryError(res: Response, message: string): void {
  sendErrorText(res, message, 'private, max-age=0');
}

/**
 * The handler of `GET /<basePath>/X.asmx?...`, choosing the answer as ASMX does: a `schema` or `wsdl`
 * item with a value asks for a secondary document (there is none), a valueless `wsdl` or `disco`
 * (any case, and alone among the valueless items) asks for the WSDL or the discovery document, and
 * anything else is the help page, for the operation named by `op` if there is one. The catalog is
 * the app's, built once for `cfg.xmlNamespace`.
 */
export function createServicePages(cfg: Config, wsdl: WsdlCatalog): ServicePageHandler {
  const ns = cfg.xmlNamespace;

  return (endpoint, req, res) => {
    const query = parseQuery(targetOf(req).query);
    if (queryValue(query, 'schema') !== undefined) return discoveryError(res, 'Schema not found.');
    if (queryValue(query, 'wsdl') !== undefined) return discoveryError(res, 'XML Web service description was not found.');

    const url = serviceUrl(req, cfg, endpoint.name);
    const valueless = queryValue(query, null)?.toLowerCase();
    if (valueless === 'wsdl') return reply(res, 200, 'text/xml; charset=utf-8', wsdl.text(endpoint.name, url));
    if (valueless === 'disco') return reply(res, 200, 'text/xml; charset=utf-8', discoDocument(url, endpoint, ns, cfg.protocols));

    const html = 'text/html; charset=utf-8';
    const requested = queryValue(query, 'op');
    if (requested === undefined) return reply(res, 200, html, serviceHelpPage(url, endpoint, ns));
    // Operation names are matched with regard to case, as the help generator does.
    const operation = endpoint.operations.find((op) => op.name === requested);
    return reply(
      res,
      200,
      html,
      operation === undefined
        ? methodNotFoundPage(url, endpoint, ns, requested)
        : operationHelpPage(url, endpoint, ns, operation, cfg.protocols, isLocalCaller(req, cfg)),
    );
  };
}
