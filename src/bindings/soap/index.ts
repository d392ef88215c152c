import type { Request, Response } from '../../transport/types';
import { AsmxError, Errors } from '../../basics/errors';
import { exchangeOf, reportFault, reportRefusal } from '../../transport/exchange';
import { callerOf } from '../../transport/context';
import { ABSENT_CHAR, charFromSoapCode } from '../../contract/char';
import { type EndpointSpec, type OperationSpec, soapActionOf } from '../../contract/operations';
import type { Caller, Operation, Result } from '../../contract/types';
import { compileAnswerWriter, KeptBytes } from '../answers';
import type { Protocol } from '../../config';
import { send } from '../send';
import { urlDecode } from '../../basics/url-decode';
import { decodeEnvelope } from './encoding';
import { checkWsdl } from './node-soap';
import { quickScan } from './quick-scan';
import { type EnvelopeScan, lineAndColumn, type OperationPlan, type QName, type ReadPlan, scanEnvelope, type XmlLimits } from './scan';
import { APPLICATION_SOAP, type ContentType, isSoap, parseContentType, TEXT_XML } from './content-type';
import { Soap11, Soap12, type SoapVersion, versionOfEnvelope } from '../../contract/soap-versions';

/**
 * SOAP 1.1 and 1.2 on `POST /<Endpoint>.asmx`.
 *
 * Decided in ASMX's order: the version from Content-Type and SOAPAction, routing by SOAPAction (1.1)
 * or by the `action` parameter then the Body's first element (1.2), a refusal of malformed XML and
 * DTDs, the operation called with the arguments the envelope's one scan read, and its answer or fault
 * written in ASMX's envelope of the request's version. node-soap reads the hand-written WSDL at start
 * and must find the contract there (node-soap.ts); nothing of it runs per request.
 *
 * Past 300 lines on purpose: the front's decisions are one sequence in ASMX's order, read from top to
 * bottom here; the reading of the envelope itself is in scan.ts, builder.ts and reading.ts.
 */

/** What the front learned about a request, handed to the operation it calls. */
interface RequestContext {
  scan: EnvelopeScan;
  caller: Caller;
  /** What the operation returned, when it did. */
  result?: Result;
  /** The fault the operation ended with, and its cause when unexpected, for the request hooks. */
  fault?: AsmxError;
  cause?: unknown;
  /**
   * The parameters were read and the call began: ASMX's WebServiceHandler.Invoke sets the answer's
   * max-age=0 (PrepareContext) before the method runs, so a fault from then on (the operation's, or a
   * mustUnderstand header, which WriteReturns checks after the method) carries it, and one from
   * reading the parameters does not.
   */
  invoked?: boolean;
}

export interface SoapHandler {
  /** Answers a SOAP request whose body has been read into `req.body`. */
  handle(req: Request, res: Response): Promise<void>;
  /** Answers a SOAP request whose body is over the size limit, unread. */
  tooLarge(req: Request, res: Response): void;
}

export interface SoapBindingOptions {
  endpoint: EndpointSpec;
  /** The endpoint's WSDL with the namespace filled in. */
  wsdl: string;
  ns: string;
  operations: ReadonlyMap<string, Operation>;
  xmlLimits: XmlLimits;
  /** The SOAP versions the protocols switch leaves on (HttpSoap, HttpSoap12); at least one. */
  protocols: ReadonlySet<Protocol>;
}

export async function createSoapBinding(opts: SoapBindingOptions): Promise<SoapHandler> {
  const { endpoint, ns } = opts;
  const byAction = new Map(endpoint.operations.map((op) => [soapActionOf(ns, op.name), op]));
  await checkWsdl(opts.wsdl, endpoint);
  const servers = {
    '1.1': soapServer(opts, Soap11),
    '1.2': soapServer(opts, Soap12),
  };

  // With one version switched off, every request goes through the other's routing, and an envelope
  // of the version that is off is a version mismatch (SOAP 1.2's Upgrade header only with 1.2 on).
  const soap11 = opts.protocols.has(Soap11.protocol);
  const soap12 = opts.protocols.has(Soap12.protocol);
  const expecting = soap11 ? Soap11.envelopeNs : Soap12.envelopeNs;
  const upgrade: SoapVersion['name'][] = soap12 ? (soap11 ? ['1.1', '1.2'] : ['1.2']) : [];
  // CheckHelperVersion: an unknown namespace is answered in 1.1 if it is on, a known one switched off in 1.1.
  const mismatch = (res: Response, root: QName) =>
    sendFault(
      res,
      soap11 || versionOfEnvelope(root.ns) !== null ? Soap11 : Soap12,
      Errors.versionMismatch(root.ns, expecting),
      undefined,
      upgrade,
    );
  const envelopes = new Set([...(soap11 ? [Soap11.envelopeNs] : []), ...(soap12 ? [Soap12.envelopeNs] : [])]);
  const plans = new Map(endpoint.operations.map((op) => [op, operationPlan(op, ns)]));
  const planOf = (op: OperationSpec | undefined) => (op === undefined ? undefined : plans.get(op));
  const byElement = (childNs: string, local: string) => planOf(bodyOperation(endpoint, ns, { ns: childNs, local }));
  /** SoapServerProtocol.GuessVersion: the version whose routing runs. */
  const guess = (contentType: ContentType, soapAction: string | undefined) =>
    soap11 && (!soap12 || (soapAction !== undefined && contentType.type !== APPLICATION_SOAP)) ? Soap11 : Soap12;

  const answer = async (req: Request, res: Response): Promise<void> => {
    const contentType = parseContentType(header(req, 'content-type'));
    const soapAction = header(req, 'soapaction');
    const guessed = guess(contentType, soapAction);
    const routeByAction = guessed === Soap11;
    // SOAP 1.1 routing reads nothing but the SOAPAction header.
    if (routeByAction && soapAction === undefined) return sendFault(res, Soap11, Errors.noValidAction());

    let op: OperationSpec | undefined;
    if (routeByAction) {
      // Quotes come off when both are there, then the value is URL-decoded, as ASMX reads it.
      const value = urlDecode(unquote(soapAction!));
      op = byAction.get(value);
      if (op === undefined) return sendFault(res, Soap11, Errors.soapActionUnknown(value));
    }
    // SOAP 1.2 names the operation in the action parameter; an empty one names nothing.
    const action = routeByAction || !contentType.action ? undefined : urlDecode(contentType.action);
    if (action !== undefined) op = byAction.get(action);
    const named = op !== undefined;
    const notRouted = () => (action !== undefined ? Errors.actionNotRecognized(action) : Errors.noValidAction());
    // Once routed, ReadParameters first asks whether the media type is SOAP at all.
    const unsupported = () => sendEmpty(res, 415, guessed, `Content-Type ${contentType.type || '(none)'} is not SOAP`);
    if (named && !isSoap(contentType)) return unsupported();

    const decoded = decodeEnvelope(Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0), contentType.application, contentType.charset);
    // An encoding the XML reader cannot read fails before anything is read, like malformed XML.
    if (!decoded.ok)
      return named
        ? sendEmpty(res, 400, guessed, decoded.reasons.join(' ---> '))
        : sendFault(res, Soap12, Errors.unreadableXml(...decoded.reasons));
    const plan: ReadPlan = { envelopes, named: planOf(op), byElement };
    const scanned = quickScan(decoded.text, opts.xmlLimits, plan) ?? scanEnvelope(decoded.text, opts.xmlLimits, plan);
    if (!scanned.ok) {
      // Routing by the Body's element had not read what it reads: the envelope's fault. Past that,
      // ASMX was reading parameters, and a malformed request there is a bare 400.
      const rootVersion = scanned.root && versionOfEnvelope(scanned.root.ns);
      const version = rootVersion ?? guessed;
      if (!named) {
        if (!scanned.routed) return sendFault(res, version, Errors.unreadableXml(scanned.message));
        op = bodyOperation(endpoint, ns, scanned.bodyChild);
        if (op === undefined) return sendFault(res, version, notRouted());
        if (!isSoap(contentType)) return unsupported();
      }
      if (rootVersion === Soap11 && contentType.type !== TEXT_XML)
        return sendEmpty(res, 415, Soap11, `SOAP 1.1 envelope as ${contentType.type}`);
      return sendEmpty(res, 400, version, scanned.message);
    }
    const { scan } = scanned;
    const version = versionOfEnvelope(scan.root.ns);
    if (version === null || !envelopes.has(version.envelopeNs)) return mismatch(res, scan.root);
    const isEnvelope = scan.root.local === 'Envelope';
    // Routing by the Body's element looks for the Envelope first.
    if (!named && !isEnvelope) return sendFault(res, version, Errors.missingEnvelope(true));
    if (!named && !scan.hasBody) return sendFault(res, version, Errors.missingBody(true));
    op ??= bodyOperation(endpoint, ns, scan.bodyChild);
    if (op === undefined) return sendFault(res, version, notRouted());
    if (!isSoap(contentType)) return unsupported();
    if (version === Soap11 && contentType.type !== TEXT_XML) return sendEmpty(res, 415, Soap11, `SOAP 1.1 envelope as ${contentType.type}`);
    if (!isEnvelope) return sendFault(res, version, Errors.missingEnvelope(false));
    if (!scan.hasBody || scan.bodyMisplaced) return sendFault(res, version, Errors.missingBody(false));
    // XmlSerializer met markup where a parameter's text was (a bare 400, like any XML error there),
    // or a value that does not convert.
    const { failure } = scan;
    if (failure?.kind === 'markup') return sendEmpty(res, 400, version, 'markup in a parameter');
    if (failure?.kind === 'value') {
      const { line, column } = lineAndColumn(scan.source, failure.index);
      return sendFault(res, version, Errors.badXmlValue(line, column, failure.reasons));
    }

    exchangeOf(res).operation = op.name;
    const context: RequestContext = { scan, caller: callerOf(res) };
    const result = await servers[version.name].call(op, operationArguments(op, scan), context);
    if (context.fault !== undefined) reportFault(res, context.fault, context.cause);
    if (result.statusCode === 200) return sendSoap(res, 200, version, result.body, 'private, max-age=0');
    return sendSoap(res, result.statusCode, version, result.body, context.invoked === true ? 'private, max-age=0' : 'private');
  };

  return {
    handle: async (req, res) => {
      try {
        await answer(req, res);
      } catch (e) {
        // A failure no rule above foresaw: the server fault, in the version the request asked for; the
        // request hooks log the cause with the request's id.
        if (res.headersSent) {
          exchangeOf(res).error = e;
          return void res.destroy();
        }
        sendFault(res, guess(parseContentType(header(req, 'content-type')), header(req, 'soapaction')), Errors.internal(), e);
      }
    },
    tooLarge: (req, res) => {
      // Only a SOAP 1.1 request routed by its SOAPAction gets past routing without reading the body.
      const soapAction = header(req, 'soapaction');
      const byAction = soapAction !== undefined && guess(parseContentType(header(req, 'content-type')), soapAction) === Soap11;
      sendFault(res, byAction ? Soap11 : Soap12, Errors.soapTooLarge(!byAction));
    },
  };
}

/**
 * The operation's arguments as ASMX's XmlSerializer read them (reading.ts): the text as written, white
 * space kept, null when no parameter was read at all.
 */
function operationArguments(op: OperationSpec, scan: EnvelopeScan): Record<string, string | null> | null {
  let args: Record<string, string | null> | null = null;
  for (const p of op.params) {
    const found = scan.params.get(p.name);
    // xsi:nil on an empty element makes a string null.
    if (found === undefined || (found.nil && p.type === 'string')) continue;
    (args ??= {})[p.name] = found.text;
  }
  return args;
}

/** What the envelope reader needs of an operation: its element, its parameters, and a char's conversion. */
function operationPlan(op: OperationSpec, ns: string): OperationPlan {
  const charCheck = (text: string) => {
    const converted = charFromSoapCode(text);
    return 'reasons' in converted ? converted.reasons : null;
  };
  return { ns, name: op.name, params: op.params.map((p) => (p.type === 'char' ? { name: p.name, check: charCheck } : { name: p.name })) };
}

/** One endpoint's operations for one SOAP version: each run with the arguments read, its answer or fault in ASMX's envelope. */
interface SoapServer {
  call(
    op: OperationSpec,
    args: Record<string, string | null> | null,
    context: RequestContext,
  ): Promise<{ body: string | Buffer; statusCode: number }>;
}

function soapServer(opts: SoapBindingOptions, version: SoapVersion): SoapServer {
  const { endpoint, ns } = opts;
  const kept = new KeptBytes();
  const runs = new Map<string, (args: Record<string, string | null> | null, context: RequestContext) => ReturnType<SoapServer['call']>>();
  for (const op of endpoint.operations) {
    const run = opts.operations.get(op.name);
    if (run === undefined) throw new Error(`no implementation for ${endpoint.name}.${op.name}`);
    const writer = compileAnswerWriter(op, ns);
    runs.set(op.name, async (args, context) => {
      try {
        const values = readArguments(op, args ?? {});
        // Headers are checked once parameters are read, before the operation runs.
        context.invoked = true;
        if (context.scan.mustUnderstand !== null) throw Errors.mustUnderstand(context.scan.mustUnderstand);
        const result = await run(context.caller, values);
        context.result = result;
        return { body: kept.of(result, () => version.envelope(writer.soap(result))), statusCode: 200 };
      } catch (e) {
        context.fault = e instanceof AsmxError ? e : Errors.internal();
        context.cause = e;
        return { body: version.fault(context.fault), statusCode: 500 };
      }
    });
  }
  return { call: (op, args, context) => runs.get(op.name)!(args, context) };
}

/** The operation's arguments by their contract names; a char's code was checked when it was read. */
function readArguments(op: OperationSpec, args: Record<string, unknown>): Record<string, string | null> {
  const read: Record<string, string | null> = {};
  for (const p of op.params) {
    const value = args[p.name];
    if (p.type === 'string') read[p.name] = typeof value === 'string' ? value : null;
    // An absent char is default(char).
    else if (typeof value !== 'string') read[p.name] = ABSENT_CHAR;
    else {
      const converted = charFromSoapCode(value);
      if (!('char' in converted)) throw Errors.internal();
      read[p.name] = converted.char;
    }
  }
  return read;
}

function bodyOperation(endpoint: EndpointSpec, ns: string, child: QName | null): OperationSpec | undefined {
  if (child === null || child.ns !== ns) return undefined;
  return endpoint.operations.find((op) => op.name === child.local);
}

/** Quotes are removed only when both are there, as ASMX does. */
function unquote(value: string): string {
  return value.length >= 2 && value.startsWith('"') && value.endsWith('"') ? value.slice(1, -1) : value;
}

function header(req: Request, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function sendFault(res: Response, version: SoapVersion, error: AsmxError, cause?: unknown, upgrade?: readonly SoapVersion['name'][]): void {
  reportFault(res, error, cause);
  sendSoap(res, 500, version, version.fault(error, upgrade), 'private');
}

function sendEmpty(res: Response, status: number, version: SoapVersion, reason: string): void {
  reportRefusal(res, reason);
  sendSoap(res, status, version, '', 'private');
}

function sendSoap(res: Response, status: number, version: SoapVersion, body: string | Buffer, cacheControl: string): void {
  exchangeOf(res).binding = version === Soap12 ? 'soap12' : 'soap11';
  send(res, status, { 'Content-Type': version.contentType, 'Cache-Control': cacheControl }, body);
}
