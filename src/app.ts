import express, { type NextFunction, type Request, type Response } from 'express';
import { createHttpBinding, type HttpHandler } from './bindings/http';
import { createSoapBinding, type SoapHandler } from './bindings/soap';
import type { Config } from './config';
import { protocolVerdict, type RequestKind } from './bindings/protocols';
import { exchangeOf } from './ops/exchange';
import { sendRuntimeError } from './pages/runtime-error';
import { requestHooks } from './ops/request-hooks';
import { createServicePages } from './pages';
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
  const catalog = new WsdlCatalog(config.xmlNamespace, undefined, config.protocols);
  const pages = createServicePages(config, catalog);

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
        protocols: config.protocols,
      }),
      http: createHttpBinding(spec, config.xmlNamespace, operations),
    });
  }

  const route = new RegExp(`^${escapeRegExp(config.basePath)}/([^/]+)\\.asmx(?:/(.*))?$`, 'i');
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', false);
  app.use(requestHooks(config));

  const readBody = express.raw({ type: () => true, limit: BODY_LIMIT });

  app.use((req: Request, res: Response, next: NextFunction) => {
    const match = route.exec(req.path);
    const endpoint = match ? findEndpoint(decodeURIComponent(match[1])) : undefined;
    if (!match || endpoint === undefined) return next();
    const b = bindings.get(endpoint.name)!;
    const opName = match[2];
    const ex = exchangeOf(res);
    ex.endpoint = endpoint.name;
    const kind = requestKind(req.method, opName);
    // The SOAP binding names its version once it has read the envelope.
    if (kind !== undefined && kind !== 'soap') ex.binding = kind === 'page' ? 'documentation' : kind;
    const verdict = kind === undefined ? 'take' : protocolVerdict(kind, config.protocols);
    if (verdict !== 'take') return sendRuntimeError(res, verdict, config.basePath);

    if (opName === undefined) {
      if (req.method === 'GET' || req.method === 'HEAD') return pages(b.spec, req, res);
      if (req.method === 'POST') return readBody(req, res, (err?: unknown) => (err ? next(err) : void b.soap(req, res).catch(next)));
    } else if (req.method === 'GET' || req.method === 'HEAD') {
      return void b.http(decodeURIComponent(opName), req, res).catch(next);
    } else if (req.method === 'POST') {
      return readBody(req, res, (err?: unknown) =>
        err ? next(err) : void b.http(decodeURIComponent(opName), req, res).catch(next),
      );
    }
    res.status(405).set('Allow', 'GET, HEAD, POST').end();
  });

  app.use((_req: Request, res: Response) => {
    res.status(404).type('text/plain; charset=utf-8').send('Not found.\r\n');
  });

  // Body-reading failures (too large, bad gzip) and anything unforeseen: a status, never internals.
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = (err as { status?: unknown }).status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      res.status(status).end();
      return;
    }
    exchangeOf(res).error = err;
    if (!res.headersSent) res.status(500).end();
    else res.destroy();
  });

  return app;
}

function requestKind(method: string, opName: string | undefined): RequestKind | undefined {
  if (method === 'POST') return opName === undefined ? 'soap' : 'httppost';
  if (method === 'GET' || method === 'HEAD') return opName === undefined ? 'page' : 'httpget';
  return undefined;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
