import { pathOf } from '../contract/route';
import type { Request } from '../transport/types';
import type { Config } from '../config';
import { findEndpoint } from '../contract/operations';
import { requestHost, requestScheme } from '../transport/request-url';

/**
 * The URL by which the client reached `/<basePath>/<Endpoint>.asmx`, as ASMX puts it in the WSDL
 * addresses and the discovery document. X-Forwarded-Prefix is deliberately ignored: a virtual
 * directory is configured as BASE_PATH (or as part of PUBLIC_URL) instead.
 */
export function serviceUrl(req: Request, cfg: Pick<Config, 'publicUrl' | 'trustProxy' | 'basePath'>, endpoint: string): string {
  if (cfg.publicUrl !== null) return `${cfg.publicUrl}/${findEndpoint(endpoint)?.name ?? endpoint}.asmx`;
  // The path as IIS hands it to ASP.NET (Request.Url's): decoded and made canonical, in the client's case.
  const asmx = /^.*?\.asmx/i.exec(pathOf(req))?.[0] ?? `${cfg.basePath}/${endpoint}.asmx`;
  return `${requestScheme(req, cfg.trustProxy)}://${requestHost(req, cfg.trustProxy)}${encodeURI(asmx)}`;
}
