import express, { type NextFunction, type Request, type Response } from 'express';
import { createHttpBinding, type HttpHandler } from './bindings/http';
import { send } from './bindings/send';
import { createSoapBinding, type SoapHandler } from './bindings/soap';
import type { Config } from './config';
import { log } from './log';
import { createServicePages } from './pages';
import { createErrorPage } from './pages/error-page';
import { WsdlCatalog } from './pages/wsdl';
import { ENDPOINTS, type EndpointSpec, findEndpoint } from './services/contract';
import { createServices } from './services';
import type { Store } from './store/store';

/** ASP.NET's default maxRequestLength is 4 MB; nothing larger is read. */
const BODY_LIMIT = '4mb';

interface EndpointBindings {
  spec: EndpointSpec;
  soap: SoapHandler;
  http: HttpHandler;
}

/**
 * The whole service as an Express app: `/<Endpoint>.asmx` for SOAP and the service pages,
 * `/<Endpoint>.asmx/<Op>` for HTTP GET/POST, everything under BASE_PATH. Paths match without
 * regard to case, as on IIS.
 */
export async function createApp(config: Config, store: Store): Promise<express.Express> {
  const services = createServices(store);
  const catalog = new WsdlCatalog(config.xmlNamespace);
  const pages = createServicePages(config, catalog);
  const errorPage = createErrorPage(config.basePath);

  const bindings = new Map<string, EndpointBindings>();
  for (const spec of ENDPOINTS) {
    const operations = services.get(spec.name);
    if (operations === undefined) throw new Error(`no implementation for endpoint ${spec.name}`);
    bindings.set(spec.name, {
      spec,
      soap: await createSoapBinding({
        endpoint: spec,
        ns: config.xmlNamespace,
        wsdl: catalog.text(spec.name, `http://localhost/${spec.name}.asmx`),
        operations,
      }),
      http: createHttpBinding(spec, config.xmlNamespace, operations),
    });
  }

  const route = new RegExp(`^${escapeRegExp(config.basePath)}/([^/]+)\\.asmx(?:/(.*))?$`, 'i');
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', false);

  const readBody = express.raw({ type: () => true, limit: BODY_LIMIT });

  app.use((req: Request, res: Response, next: NextFunction) => {
    const match = route.exec(req.path);
    const endpoint = match ? findEndpoint(decodeURIComponent(match[1])) : undefined;
    if (!match || endpoint === undefined) return next();
    const b = bindings.get(endpoint.name)!;
    const opName = match[2];

    // HEAD is not GET for ASMX: no protocol accepts it, nor any method but GET and POST. On a service
    // page that is a 405, and a URL naming no operation (HEAD or PUT on /X.asmx/Op, or /X.asmx/ with
    // no name) is "Request format is unrecognized"; both reach a client as ASP.NET's error page.
    if (opName === undefined) {
      if (req.method === 'GET') return pages(b.spec, req, res);
      if (req.method === 'POST') return readBody(req, res, (err?: unknown) => (err ? next(err) : void b.soap(req, res).catch(next)));
      return errorPage(res, 405);
    }
    if (opName === '' || (req.method !== 'GET' && req.method !== 'POST')) return errorPage(res, 500);
    if (req.method === 'GET') return void b.http(decodeURIComponent(opName), req, res).catch(next);
    return readBody(req, res, (err?: unknown) => (err ? next(err) : void b.http(decodeURIComponent(opName), req, res).catch(next)));
  });

  app.use((_req: Request, res: Response) => {
    send(res, 404, { 'Content-Type': 'text/plain; charset=utf-8' }, 'Not found.\r\n');
  });

  // Body-reading failures (too large, bad gzip) and anything unforeseen: a status, never internals.
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = (err as { status?: unknown }).status;
    if (typeof status === 'number' && status >= 400 && status < 500) return send(res, status, {});
    log.error('request failed', { error: err });
    if (!res.headersSent) send(res, 500, {});
    else res.destroy();
  });

  return app;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
