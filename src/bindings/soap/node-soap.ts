import * as soap from 'soap';

/**
 * The one file that reaches into node-soap's private parts. node-soap dispatches each operation it
 * binds in the WSDL and writes its answer; the SOAP front (index.ts) has already routed and parsed the
 * request, so this file calls node-soap's dispatch directly and replaces its envelope and fault
 * writers with ASMX's. soap is pinned to an exact version in package.json for this, and
 * test/node-soap-internals.test.ts names the part that moved when an upgrade moves one of these:
 *
 * - `Server.prototype._executeMethod(options, req, res, callback)`: the dispatch, called as node-soap's
 *   own request processing calls it once it has parsed an envelope; `req` reaches the operation as
 *   its fourth argument, which is how the caller's context travels.
 * - `Server.prototype._envelope(body, headers, includeTimestamp)` and
 *   `Server.prototype._sendError(fault, callback, includeTimestamp)`: replaced on each server; a
 *   thrown `{ Fault }` reaches `_sendError` as that Fault.
 * - `server.wsdl.definitions.services[service].ports[port].binding.topElements[op].outputName`: the
 *   answer element's name, which node-soap's request processing looks up per request.
 * - an operation's result `{ _xml }`: written into the Body as it is.
 */

/**
 * An operation as node-soap dispatches it: the arguments node-soap read, and the context the caller
 * gave `call`. It returns the answer element's XML; what it throws goes to `fault`.
 */
export type NodeSoapOperation<C> = (args: Record<string, unknown>, context: C) => Promise<string>;

export interface NodeSoapOptions<C> {
  /** The WSDL's service, its SOAP ports `<name>Soap` and `<name>Soap12`, answering at `/<name>.asmx`. */
  name: string;
  wsdl: string;
  operations: ReadonlyMap<string, NodeSoapOperation<C>>;
  /** The whole answer envelope around the answer element. */
  envelope(body: string): string;
  /** The whole fault envelope for what an operation threw; undefined for a failure of node-soap's own. */
  fault(thrown: unknown): string;
}

/** One endpoint's node-soap server for one SOAP version. */
export interface NodeSoapEndpoint<C> {
  /** Dispatches `method` with the arguments already read: the answer, and a status for a fault. */
  call(method: string, args: Record<string, string | null> | null, context: C): Promise<{ body: string; statusCode?: number }>;
}

/** node-soap Server internals replaced on each server. */
interface NodeSoapHooks {
  _envelope(body: string, headers: unknown, includeTimestamp: unknown): string;
  _sendError(fault: unknown, callback: (result: string, statusCode?: number) => void, includeTimestamp?: unknown): void;
}

/** node-soap's dispatch, as its own request processing calls it once it has parsed the envelope. */
interface NodeSoapDispatch<C> {
  _executeMethod(
    options: {
      serviceName: string;
      portName: string;
      methodName: string;
      outputName: string;
      args: Record<string, string | null> | null;
      style: 'document';
    },
    req: NodeSoapRequest<C>,
    res: unknown,
    callback: (result: string, statusCode?: number) => void,
  ): void;
}

/** A port of a WSDL service as node-soap holds it. */
interface NodeSoapPort {
  binding: { topElements?: Record<string, { outputName: string }> };
}

/** What node-soap's parsed WSDL holds that this file reads or sets. */
interface NodeSoapWsdl {
  definitions: { services: Record<string, { ports: Record<string, NodeSoapPort> }> };
}

/** The request node-soap hands an operation: only the caller's context travels in it. */
interface NodeSoapRequest<C> {
  headers: Record<symbol, C>;
}
const CONTEXT = Symbol('asmx.request');

/** What an operation threw, on its way through node-soap to `_sendError`. */
interface FaultCarrier {
  Fault: { thrown: unknown };
}

export async function createNodeSoapEndpoint<C>(opts: NodeSoapOptions<C>): Promise<NodeSoapEndpoint<C>> {
  const handlers: Record<string, soap.ISoapServiceMethod> = {};
  for (const [name, operation] of opts.operations) {
    handlers[name] = async (args: Record<string, unknown> | undefined, _cb: unknown, _h: unknown, req: NodeSoapRequest<C>) => {
      try {
        return { _xml: await operation(args ?? {}, req.headers[CONTEXT]) };
      } catch (thrown) {
        throw { Fault: { thrown } } satisfies FaultCarrier;
      }
    };
  }

  const server = await new Promise<soap.Server>((resolve, reject) => {
    void soap.createServerless({
      path: `/${opts.name}.asmx`,
      services: { [opts.name]: { [`${opts.name}Soap`]: handlers, [`${opts.name}Soap12`]: handlers } },
      xml: opts.wsdl,
      handleNilAsNull: true,
      callback: (err: unknown, s: soap.Server) => (err ? reject(err) : resolve(s)),
    });
  });
  const wsdl = (server as unknown as { wsdl: NodeSoapWsdl }).wsdl;
  const hooks: NodeSoapHooks = {
    _envelope: (body) => opts.envelope(body),
    _sendError: (fault, callback) => callback(opts.fault((fault as Partial<FaultCarrier['Fault']>).thrown), 500),
  };
  const dispatch = Object.assign(server, hooks) as unknown as NodeSoapDispatch<C>;

  // What node-soap's request processing looks up per request, looked up once: the first SOAP port of
  // the WSDL (every port's address is the endpoint's path; which ports there are follows PROTOCOLS,
  // and with both SOAP protocols off no SOAP request gets this far), and each operation's answer
  // element in that port's binding.
  const [serviceName, service] = Object.entries(wsdl.definitions.services)[0]!;
  const [portName, port] = Object.entries(service.ports).find(([, p]) => p.binding.topElements !== undefined) ?? ['', null];
  const outputName = (method: string) => port?.binding.topElements?.[method]?.outputName ?? `${method}Response`;
  const outputNames = new Map([...opts.operations.keys()].map((method) => [method, outputName(method)]));
  return {
    call: (method, args, context) =>
      new Promise((resolve) => {
        const options = {
          serviceName,
          portName,
          methodName: method,
          outputName: outputNames.get(method) ?? outputName(method),
          args,
          style: 'document' as const,
        };
        dispatch._executeMethod(options, { headers: { [CONTEXT]: context } }, null, (body, statusCode) => resolve({ body, statusCode }));
      }),
  };
}
