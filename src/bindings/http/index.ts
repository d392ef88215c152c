import type { Request, Response } from '../../transport/types';
import { AsmxError, Errors } from '../../basics/errors';
import { exchangeOf, reportFault } from '../../transport/exchange';
import { callerOf } from '../../transport/context';
import { charFromHttpValue } from '../../contract/char';
import type { EndpointSpec, OperationSpec } from '../../contract/operations';
import type { Operation } from '../../contract/types';
import { type AnswerWriter, compileAnswerWriter, KeptBytes } from '../answers';
import { send, sendErrorText } from '../send';
import { parametersOf } from './form';
import { htmlEncode } from '../../basics/escape';

/**
 * HTTP GET `/<Endpoint>.asmx/<Op>?…` and HTTP POST `/<Endpoint>.asmx/<Op>` (form body), answered as
 * ASMX answers them: XML documents for data, an empty 200 for void, and 500 text errors.
 */

export interface HttpHandler {
  /** Answers `/<Endpoint>.asmx/<opName>`; a POST's body has been read into `req.body`. */
  handle(opName: string, req: Request, res: Response): Promise<void>;
  /** Answers a POST whose body is over the size limit, unread. */
  tooLarge(res: Response): void;
}

interface CompiledOperation {
  spec: OperationSpec;
  run: Operation;
  writer: AnswerWriter;
  kept: KeptBytes;
}

export function createHttpBinding(
  endpoint: EndpointSpec,
  ns: string,
  operations: ReadonlyMap<string, Operation>,
  maxFormKeys: number,
): HttpHandler {
  const compiled = new Map<string, CompiledOperation>();
  for (const spec of endpoint.operations) {
    const run = operations.get(spec.name);
    if (run === undefined) throw new Error(`no implementation for ${endpoint.name}.${spec.name}`);
    compiled.set(spec.name, { spec, run, writer: compileAnswerWriter(spec, ns), kept: new KeptBytes() });
  }

  const handle = async (opName: string, req: Request, res: Response): Promise<void> => {
    try {
      const op = compiled.get(opName) ?? fail(wrongName(endpoint, opName));
      exchangeOf(res).operation = op.spec.name;
      // A method without parameters reads neither collection, so neither is validated (HttpServerProtocol.ReadParameters).
      const collection = op.spec.params.length === 0 ? null : parametersOf(req, maxFormKeys);
      const args: Record<string, string | null> = {};
      for (const p of op.spec.params) {
        const value = collection?.get(p.name);
        if (value === undefined) throw Errors.missingParameter(p.name);
        args[p.name] = p.type === 'char' ? charFromHttpValue(value) : value;
      }
      const result = await op.run(callerOf(res), args);
      const body = op.kept.of(result, () => op.writer.http(result));
      const cache = { 'Cache-Control': 'private, max-age=0' };
      // A void answer: 200, no body and no Content-Type, as ASMX sends it.
      if (body === null) send(res, 200, cache);
      else send(res, 200, { ...cache, 'Content-Type': 'text/xml; charset=utf-8' }, body);
    } catch (e) {
      sendError(res, e);
    }
  };
  return { handle, tooLarge: (res) => sendError(res, Errors.formTooLarge()) };
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

/**
 * An unexpected failure is answered with the generic text; the request hooks log its cause. Each
 * message of the chain is HTML-encoded, as HttpServerProtocol.WriteException writes them
 * (ServerProtocol.GenerateFaultString with htmlEscapeMessage): a value the client sent comes back
 * encoded, whatever the error.
 */
function sendError(res: Response, e: unknown): void {
  const error = e instanceof AsmxError ? e : Errors.internal();
  reportFault(res, error, e);
  sendErrorText(res, error.chain.map(htmlEncode).join(' ---> '));
}
