import type { Request, Response } from '../transport/types';
import { send, sendErrorText } from '../bindings/send';
import { AsmxError } from '../basics/errors';
import { queryStringOf } from '../bindings/http/form';
import type { ValueCollection } from '../bindings/http/values';
import { reportRefusal } from '../transport/exchange';
import { createErrorPage } from './error-page';
import type { Config } from '../config';
import type { EndpointSpec } from '../contract/operations';
import { discoDocument } from './disco';
import { methodNotFoundPage, operationHelpPage, serviceHelpPage } from './help';
import { serviceUrl } from './public-url';
import { isLocalCaller } from '../transport/context';
import type { WsdlCatalog } from './wsdl';

export type ServicePageHandler = (endpoint: EndpointSpec, req: Request, res: Response) => void;

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
  const errorPage = createErrorPage(cfg.basePath);

  return (endpoint, req, res) => {
    let query: ValueCollection;
    try {
      query = queryStringOf(req, cfg.limits.maxFormKeys);
    } catch (e) {
      if (!(e instanceof AsmxError)) throw e;
      // DiscoveryServerProtocolFactory reads Request.QueryString to decide; a refusal there fails
      // WebServiceHandlerFactory ("Failed to handle request."): ASP.NET's error page.
      reportRefusal(res, e.reason);
      return errorPage(res, 500);
    }
    if (query.get('schema') !== undefined) return discoveryError(res, 'Schema not found.');
    if (query.get('wsdl') !== undefined) return discoveryError(res, 'XML Web service description was not found.');

    const url = serviceUrl(req, cfg, endpoint.name);
    const valueless = query.get(null)?.toLowerCase();
    if (valueless === 'wsdl') return reply(res, 200, 'text/xml; charset=utf-8', wsdl.text(endpoint.name, url));
    if (valueless === 'disco') return reply(res, 200, 'text/xml; charset=utf-8', discoDocument(url, endpoint, ns, cfg.protocols));

    const html = 'text/html; charset=utf-8';
    const requested = query.get('op');
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
