import type { Protocol } from '../config';
import type { RequestKind } from '../contract/route';

/**
 * How each protocol's handler factory in ASMX (System.Web.Services) answers a kind of request: it takes
 * it, it refuses the method (405), or it has nothing to say (undefined).
 */
const FACTORIES: readonly (readonly [Protocol, Partial<Record<RequestKind, 'take' | 405>>])[] = [
  ['HttpSoap', { soap: 'take' }],
  ['HttpSoap12', { soap: 'take' }],
  ['HttpGet', { httpget: 'take', httppost: 405 }],
  ['HttpPost', { httppost: 'take', httpget: 405 }],
  ['Documentation', { page: 'take', soap: 405 }],
];

/**
 * The protocols switch of a web.config (`<webServices><protocols>`). ASMX asks the enabled factories
 * in turn: the first that takes the request handles it; when none does, the last one's answer stands,
 * a 405 or, when it had nothing to say, a 500 ("Request format is unrecognized"). A remote client sees
 * either as ASP.NET's runtime error page. So a GET to an operation with HttpGet off is a 405 when HTTP
 * POST is the last enabled protocol, and a 500 when Documentation is (as the legacy host answers).
 */
export function protocolVerdict(kind: RequestKind, enabled: ReadonlySet<Protocol>): 'take' | 405 | 500 {
  let last: 405 | undefined;
  for (const [protocol, answers] of FACTORIES) {
    if (!enabled.has(protocol)) continue;
    const answer = answers[kind];
    if (answer === 'take') return 'take';
    last = answer;
  }
  return last ?? 500;
}
