import type http from 'node:http';
import { createHttpBinding, type HttpHandler } from '../bindings/http';
import { send, sendErrorText } from '../bindings/send';
import { createSoapBinding, type SoapHandler } from '../bindings/soap';
import { checkedAddress } from '../bindings/soap/node-soap';
import type { Config } from '../config';
import { Errors } from '../basics/errors';
import { protocolVerdict, takenByScriptHandler } from '../bindings/protocols';
import { isLocalCaller } from '../transport/context';
import { exchangeOf, reportRefusal, type RequestTap } from '../transport/exchange';
import { requestHooks } from './request-hooks';
import { createServicePages } from '../pages';
import { createErrorPage } from '../pages/error-page';
import { WsdlCatalog } from '../pages/wsdl';
import { ENDPOINTS, type EndpointSpec } from '../contract/operations';
import { routeAt } from '../contract/route';
import { targetOf } from '../contract/url';
import { type HostAnswer, hostRules } from './iis';
import { createServices } from '../services';
import type { SmsIntake } from '../sms/intake';
import type { Store } from '../store/store';
import { BodyAborted, BodyTooLarge, readBody } from '../transport/body';
import { answerAndClose } from '../transport/server';
import type { Request, Response } from '../transport/types';

interface EndpointBindings {
  spec: EndpointSpec;
  soap: SoapHandler;
  http: HttpHandler;
}

/** What the app is given by whoever runs it. */
export interface AppParts {
  /** AuthCode's intake: the SMS side's (createSms), with its limits and its dispatcher's wake-up. */
  intake: SmsIntake;
  /** Shadowing's view of each finished exchange. */
  tap?: RequestTap;
}

/**
 * The whole service as one node request listener: `/<Endpoint>.asmx` for SOAP and the service pages,
 * `/<Endpoint>.asmx/<Op>` for HTTP GET/POST, everything under BASE_PATH (contract/route.ts reads the
 * URL). Routing is that reading and a map, so no framework sits on the path of every request: the
 * request hooks go around it, and an error nothing caught gets ASP.NET's generic answer.
 */
export async function createApp(config: Config, store: Store, parts: AppParts): Promise<http.RequestListener> {
  const services = createServices(store, parts.intake);
  const catalog = new WsdlCatalog(config.xmlNamespace, undefined, config.protocols);
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
        wsdl: catalog.text(spec.name, checkedAddress(spec.name)),
        operations,
        xmlLimits: { maxDepth: config.limits.maxXmlDepth, maxElements: config.limits.maxXmlElements },
        protocols: config.protocols,
      }),
      http: createHttpBinding(spec, config.xmlNamespace, operations, config.limits.maxFormKeys),
    });
  }

  const beforeAsmx = hostRules(config.basePath, config.limits);
  const { limits } = config;
  const hooks = requestHooks({ trustProxy: config.trustProxy, tap: parts.tap });

  /** The body of a POST, read within the size limit; false when the request has been answered. */
  const bodyOf = async (req: Request, res: Response, refuse: () => void): Promise<boolean> => {
    try {
      req.body = await readBody(req, limits.maxBodyBytes);
      return true;
    } catch (e) {
      if (e instanceof BodyTooLarge) answerAndClose(req, res, refuse);
      else if (!(e instanceof BodyAborted)) throw e;
      return false;
    }
  };

  const route = async (req: Request, res: Response): Promise<void> => {
    // http.sys, request filtering, ASP.NET's own checks and IIS's handlers, before ASMX is reached.
    const host = beforeAsmx(req.method ?? '', targetOf(req));
    if (!('at' in host)) {
      reportRefusal(res, host.reason);
      return sendHostAnswer(req, res, host);
    }
    const { endpoint, operation: opName, kind } = routeAt(host, req.method ?? '');
    const b = bindings.get(endpoint.name)!;
    const ex = exchangeOf(res);
    ex.endpoint = endpoint.name;
    // The SOAP binding names its version once it has read the envelope.
    if (kind !== undefined && kind !== 'soap') ex.binding = kind === 'page' ? 'documentation' : kind;
    const pathInfo = opName === undefined ? '' : `/${opName}`;
    if (takenByScriptHandler(pathInfo, req.headers['content-type'])) {
      reportRefusal(res, 'ASP.NET AJAX: JSON or a script proxy asked of a service without [ScriptService]');
      // ASP.NET refuses before reading a body; reading it anyway (a too large one gets the same page)
      // lets shadow traffic copy the request, which it does only with its body.
      if (req.method === 'POST' && !(await bodyOf(req, res, () => errorPage(res, 500)))) return;
      return errorPage(res, 500);
    }
    const verdict = protocolVerdict({ method: req.method ?? '', pathInfo }, config.protocols, () => isLocalCaller(req, config));
    if (verdict !== 'take') {
      const where = opName === undefined ? 'on a service page' : opName === '' ? 'without an operation name' : 'on an operation';
      const notLocal =
        req.method === 'POST' && opName && config.protocols.has('HttpPostLocalhost') ? ' from a caller that is not local' : '';
      reportRefusal(res, `no protocol in PROTOCOLS takes ${req.method} ${where}${notLocal}`);
      return errorPage(res, verdict);
    }
    // Taken: GET or POST (HEAD is not GET for ASMX), on the service page or a named operation.
    if (opName === undefined) {
      if (req.method === 'GET') return pages(b.spec, req, res);
      if (await bodyOf(req, res, () => b.soap.tooLarge(req, res))) await b.soap.handle(req, res);
      return;
    }
    if (req.method === 'GET') return b.http.handle(opName, req, res);
    if (await bodyOf(req, res, () => b.http.tooLarge(res))) await b.http.handle(opName, req, res);
  };

  // The last line: a failure no binding foresaw. The client gets ASP.NET's generic text, never internals.
  const unexpected = (res: Response, err: unknown): void => {
    // Logged with its stack under the request's id by the request hooks.
    exchangeOf(res).error = err;
    if (res.headersSent) return void res.destroy();
    sendErrorText(res, Errors.internal().message);
  };

  return (request, response) => {
    const req = request as Request;
    const res = response as Response;
    res.locals = {};
    try {
      hooks(req, res, () => route(req, res).catch((e: unknown) => unexpected(res, e)));
    } catch (e) {
      unexpected(res, e);
    }
  };
}

function sendHostAnswer(req: Request, res: Response, host: HostAnswer): void {
  const answer = () => send(res, host.status, host.headers, host.body);
  if (host.close === true) answerAndClose(req, res, answer);
  else answer();
}
