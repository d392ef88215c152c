import { isRuntimeErrorPage, type Rule } from '../differential/rules';

/**
 * Mono's own differences as generated requests meet them (scripts/differential/): the same rules as
 * accepted.ts's list for the corpus, written for requests that have no names, by the request's
 * features and the answers. Each says why Mono is not .NET there and the reference source
 * (microsoft/referencesource) that shows .NET answers as we do; docs/fidelity.md ("The differential
 * run") says how to add one. A difference none of these (nor a temporary open rule) covers fails the run.
 */
export const MONO_OWN: Rule[] = [
  {
    name: 'mono-help-op-page',
    features: [],
    applies: (g, legacy, ours) => g.c.method === 'GET' && /\.asmx\?op=/i.test(g.c.path) && isRuntimeErrorPage(legacy) && ours.status === 200,
    reason: "Mono's ?op= help page fails with its runtime error page (500) where .NET renders the operation's page (200): its own DefaultWsdlHelpGenerator.aspx needs a `bnd` parameter (as accepted.ts's `*/help-op`)",
    evidence: "System.Web.Services/System/Web/Services/Protocols/DocumentationServerProtocol.cs: a GET to the service page with Documentation on is answered by DefaultWsdlHelpGenerator.aspx, which renders ?op= as the operation's page",
  },
  {
    name: 'mono-json-form',
    features: ['content-type:json'],
    reason: 'Mono answers application/json with JSON even to a service without [ScriptService]; .NET 4 hands it to ScriptHandlerFactory, which fails with ASP.NET\'s runtime error page (as accepted.ts\'s `http-post/ct-json`)',
    evidence: 'System.Web.Extensions/Script/Services/ScriptHandlerFactory.cs GetHandler (RestHandlerFactory.IsRestRequest), RestHandler.cs CreateHandler, WebServiceData.cs',
  },
  {
    name: 'mono-form-segment-without-equals',
    features: ['form:no-equals'],
    reason: "Mono's form parser reads a segment without `=` as a name with an empty value; .NET's as a value without a name (as accepted.ts's `http-post/auth-name-only`)",
    evidence: 'System.Web/HttpValueCollection.cs FillFromString: a segment without `=` is added with a null name and the segment as its value',
  },
  {
    name: 'mono-request-validation',
    features: ['value:validation-differs'],
    reason:
      "Mono's request validation is its own (docs/fidelity.md, Request validation): it refuses `<` before a control character and the fullwidth `＜`, lets `</` and `<?` through, validates `__` names and writes `＜` `＞` as references; .NET refuses what IsDangerousString says",
    evidence: 'System.Web/CrossSiteScriptingValidation.cs IsDangerousString (`<` before a letter, `!`, `/` or `?`; `&#`), System.Web/HttpRequest.cs ValidateHttpValueCollection (names starting `__` skipped); Mono: its HttpRequest.IsInvalidString',
  },
  {
    name: 'mono-form-raw-latin1',
    features: ['form:raw-latin1'],
    reason:
      "a form value holding a raw (unescaped) U+0080-U+00FF character along with a %-escape: Mono's HttpUtility.UrlDecode(string, Encoding) writes each char under 256 as one byte and decodes the bytes as UTF-8, so the character becomes U+FFFD; .NET decodes the form's bytes",
    evidence: 'System.Web/HttpValueCollection.cs FillFromEncodedBytes: HttpUtility.UrlDecode(bytes, offset, count, encoding) on the raw bytes of each name and value',
  },
  {
    name: 'mono-host-query-reescaped',
    features: ['query:percent-u'],
    applies: (g) => g.binding === 'get' || g.binding === 'page',
    reason:
      "the legacy host hands ASP.NET the query of HttpListener's Request.Url, which System.Uri has re-escaped: a `%` not followed by two hex digits becomes `%25`, so `%u0646` is read as the text `%u0646`; IIS hands over the query as sent, and .NET's UrlDecode reads `%uXXXX` as the character",
    evidence:
      'System.Web/HttpRequest.cs QueryStringText (IIS\'s raw query bytes) and FillInQueryStringCollection; System.Web/Util/HttpEncoder.cs UrlDecode (`%uXXXX`); the legacy host: scripts/legacy-host/AsmxHost.cs (ctx.Request.Url.Query)',
  },
  {
    name: 'mono-host-query-length-reescaped',
    features: [],
    applies: (g, legacy) => {
      const q = g.c.path.indexOf('?');
      if (q === -1 || legacy.status !== 400 || !isRuntimeErrorPage(legacy)) return false;
      const query = g.c.path.slice(q + 1).replace(/#.*$/, '');
      // System.Uri writes each of these as %XX: three characters where the client sent one
      const escaped = query.length + 2 * (query.match(/["<>\\^`{|}]/g)?.length ?? 0);
      // (the legacy host refuses from 2,048 escaped characters; a query of 2,048 as sent is an open rule's)
      return query.length < 2048 && escaped >= 2048;
    },
    reason:
      "a query string of up to 2,048 characters holding `\"<>\\^`{|}`: the legacy host's query is System.Uri's re-escaped one (each such character three), over maxQueryStringLength, so 400; IIS counts the query as sent",
    evidence: 'System.Web/HttpRequest.cs ValidateInputIfRequiredByConfig: QueryStringText.Length > httpRuntime.MaxQueryStringLength (2048) throws HttpException(400); QueryStringText is the query as IIS received it',
  },
];

export function describeMonoOwn(): string {
  const lines = ['Mono\'s own differences for generated requests (scripts/legacy/accepted-generated.ts):'];
  for (const r of MONO_OWN) lines.push(`  - ${r.name}${r.features.length > 0 ? ` [${r.features.join(', ')}]` : ''}: ${r.reason}\n      reference: ${r.evidence}`);
  return `${lines.join('\n')}\n`;
}
