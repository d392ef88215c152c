import type { Protocol } from '../config';
import type { RequestKind } from '../contract/route';

/** A factory's answer to a request: it takes it, it refuses the method (405), or it has nothing to say. */
type Answer = 'take' | 405 | undefined;

/**
 * How each protocol's handler factory in ASMX (System.Web.Services) answers a kind of request, in the
 * order ASMX asks them (WebServicesSection.ServerProtocolFactories: SOAP, HttpPost, HttpPostLocalhost,
 * HttpGet, then Documentation's discovery and help pages). HttpPostLocalhost is HttpPost's factory for
 * a local caller; for any other caller a POST gets nothing from it (HttpPostLocalhostServerProtocol.cs).
 */
const FACTORIES: readonly (readonly [Protocol, (kind: RequestKind, local: () => boolean) => Answer])[] = [
  ['HttpSoap', (kind) => (kind === 'soap' ? 'take' : undefined)],
  ['HttpSoap12', (kind) => (kind === 'soap' ? 'take' : undefined)],
  ['HttpPost', (kind) => (kind === 'httppost' ? 'take' : kind === 'httpget' ? 405 : undefined)],
  ['HttpPostLocalhost', (kind, local) => (kind === 'httppost' ? (local() ? 'take' : undefined) : kind === 'httpget' ? 405 : undefined)],
  ['HttpGet', (kind) => (kind === 'httpget' ? 'take' : kind === 'httppost' ? 405 : undefined)],
  ['Documentation', (kind) => (kind === 'page' ? 'take' : kind === 'soap' ? 405 : undefined)],
];

/**
 * The protocols switch of a web.config (`<webServices><protocols>`). ASMX asks the enabled factories
 * in turn: the first that takes the request handles it; when none does, the last one's answer stands,
 * a 405 or, when it had nothing to say, a 500 ("Request format is unrecognized"). A remote client sees
 * either as ASP.NET's runtime error page. So a GET to an operation with HttpGet off is a 405 when HTTP
 * POST is the last enabled protocol, and a 500 when Documentation is (as the legacy host answers); a
 * POST from a caller that is not local, with only HttpPostLocalhost, is answered as with HTTP POST off.
 * `local` is asked only when HttpPostLocalhost has to decide.
 */
export function protocolVerdict(kind: RequestKind, enabled: ReadonlySet<Protocol>, local: () => boolean): 'take' | 405 | 500 {
  let last: Answer;
  for (const [protocol, answer] of FACTORIES) {
    if (!enabled.has(protocol)) continue;
    last = answer(kind, local);
    if (last === 'take') return 'take';
  }
  return last ?? 500;
}
