import type { Protocol } from '../config';

/** What an ASMX protocol factory reads of a request to decide whether it is the factory's. */
export interface RequestLine {
  method: string;
  /** The path after `/X.asmx`, as ASP.NET's PathInfo: '' for the service page, '/' for `/X.asmx/`, '/Op' for an operation. */
  pathInfo: string;
}

type FactoryAnswer = 'take' | 405 | null;

/**
 * The protocol factories of System.Web.Services (WebServicesSection.ServerProtocolFactories), in its
 * order, each with its CreateIfRequestCompatible: SOAP (one factory for both versions), HTTP POST,
 * HTTP POST for a local caller (HttpPostLocalhostServerProtocol.cs: nothing to say to any other),
 * HTTP GET, then Discovery and Documentation (the ?wsdl/?disco factory and the help page's, both
 * switched by Documentation and, for a GET to the service page, taking it between them).
 */
const FACTORIES: ReadonlyArray<readonly [(on: ReadonlySet<Protocol>) => boolean, (r: RequestLine, local: () => boolean) => FactoryAnswer]> =
  [
    [(on) => on.has('HttpSoap') || on.has('HttpSoap12'), (r) => (r.pathInfo.length > 0 ? null : r.method !== 'POST' ? 405 : 'take')],
    [(on) => on.has('HttpPost'), (r) => (r.pathInfo.length < 2 ? null : r.method !== 'POST' ? 405 : 'take')],
    [
      (on) => on.has('HttpPostLocalhost'),
      (r, local) => (r.pathInfo.length < 2 ? null : r.method !== 'POST' ? 405 : local() ? 'take' : null),
    ],
    [(on) => on.has('HttpGet'), (r) => (r.pathInfo.length < 2 ? null : r.method !== 'GET' ? 405 : 'take')],
    [(on) => on.has('Documentation'), (r) => (r.pathInfo.length > 0 ? null : r.method !== 'GET' ? 405 : 'take')],
  ];

/**
 * The protocols switch of a web.config (`<webServices><protocols>`), as WebServiceHandlerFactory
 * .CoreGetHandler applies it: the enabled factories are asked in turn and the first that takes the
 * request handles it; when none does, the LAST one's answer stands (each answer replaces the one
 * before, a factory with nothing to say included): its 405 (UnsupportedRequestProtocol), or when it
 * had nothing to say, "Request format is unrecognized" (500). A remote client sees either as ASP.NET's
 * runtime error page. So DELETE on a service page is a 405 when Documentation is on (last) and a 500
 * with HttpSoap,HttpGet, and ?wsdl with Documentation off is refused like any other GET to the page.
 * 'take' means the protocol the method and path name (SOAP or the service page for `/X.asmx`, HTTP
 * GET or POST for `/X.asmx/Op`) handles the request. A POST from a caller that is not local, with
 * only HttpPostLocalhost, is answered as with HTTP POST off; `local` is asked only when
 * HttpPostLocalhost has to decide.
 */
export function protocolVerdict(request: RequestLine, enabled: ReadonlySet<Protocol>, local: () => boolean): 'take' | 405 | 500 {
  let last: FactoryAnswer = null;
  for (const [on, answer] of FACTORIES) {
    if (!on(enabled)) continue;
    last = answer(request, local);
    if (last === 'take') return 'take';
  }
  return last ?? 500;
}

/**
 * What ASP.NET AJAX takes before ASMX sees a request. On .NET 4 the `*.asmx` handler is
 * System.Web.Extensions' ScriptHandlerFactory (IIS's WebServiceHandlerFactory-Integrated-4.0 mapping,
 * and the root web.config), which hands a request to its REST handler instead of ASMX's factory when
 * the path after `.asmx` is not empty and the Content-Type is `application/json` (with parameters or
 * not), or the path is `/js` or `/jsdebug` (RestHandlerFactory.IsRestRequest). That handler serves only
 * classes marked [ScriptService] and throws for these services (WebServiceData.GetWebServiceData): a
 * client gets ASP.NET's runtime error page (500), whatever PROTOCOLS says.
 */
export function takenByScriptHandler(pathInfo: string, contentType: string | undefined): boolean {
  if (pathInfo === '') return false;
  const json = contentType !== undefined && (/^application\/json;/i.test(contentType) || contentType.toLowerCase() === 'application/json');
  return json || /^\/js(debug)?$/i.test(pathInfo);
}
