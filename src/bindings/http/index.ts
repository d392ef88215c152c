import type { Request, Response } from 'express';
import { AsmxError, Errors } from '../../errors';
import { exchangeOf, reportFault } from '../../ops/exchange';
import { charFromHttpValue } from '../../services/char';
import type { EndpointSpec, OperationSpec } from '../../services/contract';
import type { Operation } from '../../services/types';
import { type AnswerWriter, compileAnswerWriter } from '../answers';

/**
 * HTTP GET `/<Endpoint>.asmx/<Op>?…` and HTTP POST `/<Endpoint>.asmx/<Op>` (form body), answered as
 * ASMX answers them: XML documents for data, an empty 200 for void, and 500 text errors.
 */

export type HttpHandler = (opName: string, req: Request, res: Response) => Promise<void>;

interface CompiledOperation {
  spec: OperationSpec;
  run: Operation;
  writer: AnswerWriter;
}

export function createHttpBinding(
  endpoint: EndpointSpec,
  ns: string,
  operations: ReadonlyMap<string, Operation>,
): HttpHandler {
  const compiled = new Map<string, CompiledOperation>();
  for (const spec of endpoint.operations) {
    const run = operations.get(spec.name);
    if (run === undefined) throw new Error(`no implementation for ${endpoint.name}.${spec.name}`);
    compiled.set(spec.name, { spec, run, writer: compileAnswerWriter(spec, ns) });
  }

  return async (opName, req, res) => {
    try {
      const op = compiled.get(opName) ?? fail(wrongName(endpoint, opName));
      exchangeOf(res).operation = op.spec.name;
      const pairs = op.spec.params.length === 0 ? [] : parametersOf(req);
      const values = op.spec.params.map((p) => {
        const value = lookup(pairs, p.name);
        if (value === undefined) throw Errors.missingParameter(p.name);
        return p.type === 'char' ? charFromHttpValue(value) : value;
      });
      const body = op.writer.http(await op.run(...values));
      res.status(200).set('Cache-Control', 'private, max-age=0');
      if (body === null) {
        // A void answer: 200, no body and no Content-Type, as ASMX sends it.
        res.removeHeader('Content-Type');
        res.end();
      } else {
        res.set('Content-Type', 'text/xml; charset=utf-8').end(body);
      }
    } catch (e) {
      sendError(res, e);
    }
  };
}

function fail(error: AsmxError): never {
  throw error;
}

/** Operation names are matched with regard to case; a near miss gets its own message. */
function wrongName(endpoint: EndpointSpec, asked: string): AsmxError {
  const lower = asked.toLowerCase();
  const real = endpoint.operations.find((op) => op.name.toLowerCase() === lower);
  return real ? Errors.methodCase(asked, real.name) : Errors.methodNotValid(asked);
}

type Pairs = readonly (readonly [string, string])[];

/** GET reads the query string; POST reads only a form body. Both pass ASP.NET's request validation. */
function parametersOf(req: Request): Pairs {
  if (req.method === 'GET' || req.method === 'HEAD') {
    const q = req.originalUrl.indexOf('?');
    return validated('QueryString', parseForm(q === -1 ? '' : req.originalUrl.slice(q + 1)));
  }
  const contentType = req.headers['content-type'] ?? '';
  const media = contentType.split(';')[0].trim().toLowerCase();
  if (media !== 'application/x-www-form-urlencoded') throw Errors.requestFormatInvalid(contentType);
  return validated('Form', parseForm(Buffer.isBuffer(req.body) ? req.body.toString('utf8') : ''));
}

/**
 * `a=1&b=2` as ASP.NET reads it: a segment without `=` has no name (so it names no parameter),
 * `+` is a space, `%uXXXX` is a UTF-16 unit (.NET's HttpGet/HttpPost proxies send non-ASCII that
 * way), and a broken %-escape stays as it is.
 */
function parseForm(text: string): Pairs {
  const pairs: [string, string][] = [];
  for (const segment of text.split('&')) {
    const eq = segment.indexOf('=');
    if (eq === -1) continue;
    pairs.push([urlDecode(segment.slice(0, eq)), urlDecode(segment.slice(eq + 1))]);
  }
  return pairs;
}

function urlDecode(s: string): string {
  return s.replace(/\+/g, ' ').replace(/%u([0-9a-fA-F]{4})|(?:%[0-9a-fA-F]{2})+/g, (run: string, unit?: string) => {
    if (unit !== undefined) return String.fromCharCode(parseInt(unit, 16));
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
}

/**
 * ASP.NET refuses a value that looks like markup or a character reference: `<` followed by a letter,
 * `!`, `/` or `?`, or `&#`.
 */
function validated(collection: 'QueryString' | 'Form', pairs: Pairs): Pairs {
  for (const [name, value] of pairs) {
    if (/<[A-Za-z!/?]|&#/.test(value)) throw Errors.dangerousValue(collection, name, value);
  }
  return pairs;
}

/**
 * Parameter names are matched without regard to case, and a repeated name gives its values joined
 * by commas, as ASP.NET's NameValueCollection reads a query string or form.
 */
function lookup(pairs: Pairs, name: string): string | undefined {
  const lower = name.toLowerCase();
  const values: string[] = [];
  for (const [k, v] of pairs) if (k.toLowerCase() === lower) values.push(v);
  return values.length === 0 ? undefined : values.join(',');
}

/** An unexpected failure is answered with the generic text; the request hooks log its cause. */
function sendError(res: Response, e: unknown): void {
  const error = e instanceof AsmxError ? e : Errors.internal();
  reportFault(res, error, e);
  res
    .status(500)
    .set({ 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'private' })
    .end(error.message + '\r\n');
}
