import type { Answer, CaseKind } from '../../src/shadow/compare';
import type { Case } from './corpus-kit';
import { type Configuration, has } from './matrix';

/**
 * The one list of the ways the legacy host (Mono's System.Web.Services behind an HttpListener) is
 * allowed to differ from our service, each with its reason and the .NET reference source
 * (microsoft/referencesource) that shows .NET answers as we do. `npm run record-legacy -- --list` and
 * `--check` print it; test/legacy-matrix.test.ts applies it. Nothing else is accepted: a difference
 * not here is a bug of ours, fixed in src/. Generated requests (scripts/differential/) have no names:
 * accepted-generated.ts says the same rules, and those they found, by the requests' features.
 */

/** How the comparison reads Mono's answers (src/shadow/compare.ts applies these to every case). */
export const ALLOWANCES: Array<{ rule: string; evidence: string }> = [
  {
    rule: "Mono's help pages (GET /X.asmx, ?op=) are its own design: they compare status and media type, not the charset, only (case kind `help`)",
    evidence:
      'System.Web.Services/System/Web/Services/Protocols/DocumentationServerProtocol.cs renders DefaultWsdlHelpGenerator.aspx; Mono ships another page, and omits the charset System.Web/HttpResponse.cs appends to a text/* Content-Type (`; charset=` + Charset)',
  },
  {
    rule: "ASP.NET's runtime error page (what a remote client gets where ASP.NET, not the service, refuses a request) is compared as such a page: status, media type, framing, Cache-Control (case kind `error`, and any answer the legacy host gives as that page)",
    evidence: "System.Web/ErrorFormatter.cs writes the page; its markup and wording are the host's, Mono's differ",
  },
  {
    rule: 'a legacy text with {0} placeholders is a template: Mono leaves some messages unfilled',
    evidence:
      'System.Web.Services/System/Web/Services/Protocols/ValueCollectionParameterReader.cs calls Res.GetString(Res.WebMissingParameter, paramInfo.Name) on System.Web.Services.txt\'s "Missing parameter: {0}." (the generated Res formats its arguments); Mono\'s Res.GetString(name, args) returns the text unformatted (its IL: ldarg.0; ret)',
  },
  {
    rule: "request validation's refusal quotes the value as Mono cuts it: whole up to 18 characters, NULs and all, else its first 15 and `...`; ours, .NET's quote of the value without NULs (10 units before the dangerous place to 20 after), agrees when it is the quote of a value Mono could have quoted so (src/shadow/mono-quote.ts)",
    evidence:
      'System.Web/HttpRequest.cs ValidateString: value = RemoveNullCharacters(value); the piece from validationFailureIndex - 10 to + 20, "..." where cut; Mono\'s HttpRequest.ThrowValidationException (mono/mono, System.Web) quotes the value as read and, when the quoted text is over 20 characters, keeps its first 16 and appends ..."',
  },
  {
    rule: 'a lone LF in a legacy plain-text body counts as CRLF',
    evidence:
      "System.Web.Services/System/Web/Services/Protocols/HttpServerProtocol.cs WriteException writes its plain-text errors with StreamWriter.WriteLine, whose newline is Environment.NewLine: CRLF on Windows, the .NET Framework's one platform",
  },
  {
    rule: "paths are matched without regard to case: a case may ask the legacy host `legacyPath` (Mono's file lookup is case-sensitive; IIS's is not)",
    evidence:
      "System.Web/Configuration/HttpHandlerAction.cs: a handler's path (*.asmx) is a case-insensitive URL wildcard (new WildcardUrl(Path, true)), and IIS serves the .asmx file from a case-insensitive file system",
  },
];

export interface Acceptance {
  /** Case names: a name, `*` standing for any text. */
  cases: string[];
  /** The configurations it holds in (all when absent), and how to say which. */
  when?: { test: (c: Configuration) => boolean; text: string };
  reason: string;
  evidence: string;
}

export const ACCEPTED: Acceptance[] = [
  {
    cases: ['*/help-op', '*/help-op-*'],
    when: { test: (c) => has(c, 'Documentation'), text: 'Documentation on' },
    reason:
      "Mono's ?op= page fails with its runtime error page (500) under most protocol sets, where .NET renders the operation's help page (200): Mono's own DefaultWsdlHelpGenerator.aspx needs a `bnd` parameter of its own design (a NullReferenceException in BuildOperationInfo without it), .NET's page reads only `op`",
    evidence:
      "System.Web.Services/System/Web/Services/Protocols/DocumentationServerProtocol.cs: a GET to the service page with Documentation on is answered by DefaultWsdlHelpGenerator.aspx (System.Web.Services config/DefaultWsdlHelpGenerator.aspx), which renders ?op= as the operation's page",
  },
  {
    cases: ['http-post/ct-json'],
    reason:
      'Mono answers application/json with JSON ({"d":...}) even to a service without [ScriptService]; on .NET 4 the *.asmx handler, ScriptHandlerFactory, hands the request to its REST handler, which throws for a class without [ScriptService]: ASP.NET\'s runtime error page (500), as ours answers',
    evidence:
      'System.Web.Extensions/Script/Services/ScriptHandlerFactory.cs GetHandler (RestHandlerFactory.IsRestRequest: PathInfo not empty and Content-Type application/json), RestHandler.cs CreateHandler, WebServiceData.cs ("Only Web services with a [ScriptService] attribute ... can be called from script"); IIS maps *.asmx to ScriptHandlerFactory (applicationHost.config WebServiceHandlerFactory-Integrated-4.0)',
  },
  {
    cases: ['http-post/auth-name-only'],
    reason:
      "Mono's form parser reads `code&phone` as two names with empty values; .NET's reads two values without a name, so the parameters are missing",
    evidence:
      'System.Web/HttpValueCollection.cs FillFromString: a segment without `=` is added with a null name and the segment as its value',
  },
  {
    cases: ['methods/put-*', 'methods/delete-*', 'framing/http10/delete-service-page'],
    reason:
      "Mono hands every method to ASMX; IIS maps *.asmx to ASP.NET for GET, HEAD, POST and DEBUG only, and gives any other method to its static file handler: 405 with `Allow: GET, HEAD, OPTIONS, TRACE` and IIS's page on the .asmx file, 404 and IIS's page on /X.asmx/Op (no such file)",
    evidence:
      'applicationHost.config of IIS with ASP.NET 4: WebServiceHandlerFactory-Integrated-4.0 path="*.asmx" verb="GET,HEAD,POST,DEBUG", the last mapping StaticFile path="*" verb="*" resourceType="Either"; src/app/iis.ts; test/fidelity.test.ts "IIS\'s static file handler takes the methods ASP.NET is not mapped for"',
  },
  {
    cases: ['methods/options-*'],
    reason:
      'Mono hands OPTIONS to ASMX (405, or 500 on an operation); IIS answers it itself on any path: 200, `Allow` and `Public: OPTIONS, TRACE, GET, HEAD, POST`, no body',
    evidence:
      'applicationHost.config: OPTIONSVerbHandler path="*" verb="OPTIONS" modules="ProtocolSupportModule" requireAccess="None", ahead of the *.asmx mapping\'s verbs; test/fidelity.test.ts "OPTIONS and TRACE are IIS\'s on any path"',
  },
];

const matches = (pattern: string, name: string) =>
  new RegExp(
    `^${pattern
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  ).test(name);

/** The acceptance that covers this case under this configuration, if any. */
export function accepted(config: Configuration, name: string): Acceptance | undefined {
  return ACCEPTED.find((a) => a.cases.some((p) => matches(p, name)) && (a.when === undefined || a.when.test(config)));
}

/** An answer of the legacy host is ASP.NET's runtime error page. */
export const isRuntimeErrorPage = (a: Pick<Answer, 'status' | 'headers' | 'body'>) =>
  a.status >= 400 && /^text\/html\b/i.test(a.headers['content-type'] ?? '') && a.body.includes('Runtime Error');

/** How a case is compared: as its kind says, or as a runtime error page when that is what the legacy host answered. */
export function kindFor(c: Pick<Case, 'kind'>, legacy: Pick<Answer, 'status' | 'headers' | 'body'>): CaseKind {
  return isRuntimeErrorPage(legacy) ? 'error' : c.kind;
}

export function describeAccepted(): string {
  const lines = ['How the comparison reads the legacy host (Mono), and why:'];
  for (const a of ALLOWANCES) lines.push(`  - ${a.rule}\n      reference: ${a.evidence}`);
  lines.push('Accepted differences (the legacy host is Mono, not .NET):');
  for (const a of ACCEPTED.filter((x) => x.cases.length > 0)) {
    lines.push(`  - ${a.cases.join(', ')}${a.when ? ` (${a.when.text})` : ''}: ${a.reason}\n      reference: ${a.evidence}`);
  }
  return `${lines.join('\n')}\n`;
}
