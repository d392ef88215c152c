import { ParserMessages } from '../../basics/errors';
import { type OperationPlan, ParamReader, type ReadFailure, type ReadValue } from './reading';
import { afterRootError, piTargetError } from './xml-rules';

/**
 * What a SOAP request's elements tell the front, whichever reader reads them: sax (scanEnvelope) or
 * the quick reader (quick-scan.ts) for the plain requests that make up most traffic. Both feed it the
 * same events, so each rule of what ASMX reads from the envelope is written once, here: which
 * envelope, whether the Body is where ReadParameters looks for it (after at most a Header), the
 * Body's first element (SOAP 1.2's routing), the mustUnderstand header, and the parameters, read as
 * XmlSerializer reads them (reading.ts).
 *
 * The reading stops where ASMX's does, and nothing after that point can change the answer: at a root
 * element that is not an Envelope of a version switched on, at a Body out of place once routing has
 * found the operation, once SOAP 1.2's routing found nothing to route to, at a parameter that fails,
 * and one node after the root element (afterRootError).
 */

export interface QName {
  readonly ns: string;
  readonly local: string;
}

export interface EnvelopeScan {
  readonly root: QName;
  readonly hasBody: boolean;
  /** Something other than one Header came before the Body: ReadParameters finds no Body where it looks. */
  readonly bodyMisplaced: boolean;
  /** The Body's first content: an element, or text (no name, routing nowhere); null when the Body is empty or absent. */
  readonly bodyChild: QName | null;
  /** The parameters read, by name. */
  readonly params: ReadonlyMap<string, ReadValue>;
  /** Why reading the parameters stopped, if it failed. */
  readonly failure: ReadFailure | null;
  /** The qualified name of the first soap:Header entry with mustUnderstand set, if any. */
  readonly mustUnderstand: string | null;
  readonly source: string;
}

export type ScanOutcome =
  | { ok: true; scan: EnvelopeScan }
  | {
      ok: false;
      message: string;
      /** The root element, when it was read before the failure. */
      root: QName | null;
      /** The Body's first content, when routing had read it before the failure. */
      bodyChild: QName | null;
      /** Whether SOAP 1.2's routing (GetRequestElement) had read all it reads before the failure. */
      routed: boolean;
    };

/** How the request is read: what its headers decided before the envelope is. */
export interface ReadPlan {
  /** The envelope namespaces of the SOAP versions switched on. */
  readonly envelopes: ReadonlySet<string>;
  /** The operation named before the envelope is read (SOAPAction, SOAP 1.2's action). */
  readonly named: OperationPlan | undefined;
  /** The operation a Body's first element names, when none was named (SOAP 1.2's routing). */
  readonly byElement: (ns: string, local: string) => OperationPlan | undefined;
}

/**
 * How much XML one request may hold. Checked while scanning, so that a hostile document (deep
 * nesting, a flood of elements) is refused after a bounded amount of work.
 */
export interface XmlLimits {
  readonly maxDepth: number;
  readonly maxElements: number;
}

/** An attribute as both readers report it: its expanded name and its value as written. */
export interface ScannedAttribute {
  readonly uri: string;
  readonly local: string;
  readonly value: string;
}

const XSI = 'http://www.w3.org/2001/XMLSchema-instance';

/** A refusal with .NET's message, position included. */
export class Refused extends Error {}

/** Thrown by scanEnvelope's sax handlers once the builder has stopped (throwing costs a microsecond: the quick reader checks `stopped` instead). */
export class Stop extends Error {}

const isBlank = (text: string) => /^[ \t\r\n]*$/.test(text);

export class EnvelopeBuilder {
  root: QName | null = null;
  bodyChild: QName | null = null;
  /** The reading has ended where ASMX's ends: the reader feeds no more events and takes result(). */
  stopped = false;
  /** SOAP 1.2's routing has read the Body's first content (or found the Body empty). */
  routed = false;
  private hasBody = false;
  private bodyMisplaced = false;
  /** A Header or anything else has come at depth 2. */
  private sawEnvelopeChild = false;
  private mustUnderstand: string | null = null;
  // depth 1 = Envelope, 2 = Header/Body, 3 = operation element (or header entry), 4 = parameter
  private depth = 0;
  private section: 'Header' | 'Body' | null = null;
  private reader: ParamReader | null = null;
  /** An empty element (`<a/>`) opened: the reader hears of it at its end, where the next node's index is known. */
  private empty: { uri: string; local: string; nil: boolean } | null = null;
  private elements = 0;
  /**
   * A value did not convert. ReadElementString had already moved the reader on to the node after
   * the parameter (its last step is Read()) before the conversion ran, so that node is read: a
   * malformed one is the XmlException ASMX answers (a bare 400), and once it has come whole the
   * reading ends with the value's fault.
   */
  private valueFailed = false;

  /**
   * @param at where the reader stands, for a refusal's message (the quick reader gives up instead,
   * leaving the refusal to sax)
   * @param position the 1-based line and column of an index, for messages at a known index
   */
  constructor(
    private readonly source: string,
    private readonly limits: XmlLimits,
    private readonly plan: ReadPlan,
    private readonly at: () => string,
    private readonly position: (index: number) => string,
  ) {}

  open(name: string, uri: string, local: string, attributes: Iterable<ScannedAttribute>, empty: boolean): void {
    if (this.nodeAfterFailure()) return;
    const depth = ++this.depth;
    if (depth > this.limits.maxDepth) throw new Refused(`${ParserMessages.tooDeep(this.limits.maxDepth)} ${this.at()}`);
    if (++this.elements > this.limits.maxElements)
      throw new Refused(`${ParserMessages.tooManyElements(this.limits.maxElements)} ${this.at()}`);
    if (depth === 1) {
      this.root = { ns: uri, local };
      // A version mismatch, or no Envelope: ASMX reads no further.
      if (local !== 'Envelope' || !this.plan.envelopes.has(uri)) return this.stop();
    } else if (depth === 2) this.envelopeChild(uri, local, empty);
    else if (depth === 3 && this.section === 'Header' && this.mustUnderstand === null) {
      for (const a of attributes) {
        if (a.local === 'mustUnderstand' && a.uri === this.root?.ns) {
          if (a.value === '1' || a.value === 'true') this.mustUnderstand = name;
          break;
        }
      }
    }
    if (this.section !== 'Body' || depth < 3) return;
    if (depth === 3 && !this.routed) this.route({ ns: uri, local });
    if (this.reader === null || this.stopped) return;
    let nil = false;
    for (const a of attributes) if (a.local === 'nil' && a.uri === XSI && (a.value === 'true' || a.value === '1')) nil = true;
    if (empty) this.empty = { uri, local, nil };
    else if (!this.reader.open(uri, local, false, nil, 0)) this.stop();
  }

  /** Text or CDATA. */
  text(text: string, cdata: boolean): void {
    if (this.nodeAfterFailure()) return;
    if (this.depth === 1 && !this.hasBody && (cdata || !isBlank(text))) this.misplaced();
    if (this.section !== 'Body') return;
    if (this.depth === 2 && !this.routed && (cdata || !isBlank(text))) this.route({ ns: '', local: '' });
    if (!this.stopped) this.reader?.textNode(text);
  }

  comment(): void {
    if (this.nodeAfterFailure()) return;
    if (this.section === 'Body' && this.reader !== null && !this.reader.otherNode()) this.stop();
  }

  /** A processing instruction, its target starting at `index`. */
  processingInstruction(index: number): void {
    const refused = piTargetError(this.source, index);
    if (refused !== null) throw new Refused(`${refused.message} ${this.position(refused.index)}`);
    this.comment();
  }

  /** @param position the index just past the end tag's `>` (or the empty element's `/>`) */
  close(position: number): void {
    if (this.nodeAfterFailure()) return;
    const { depth } = this;
    if (this.reader !== null && this.section === 'Body' && depth >= 2) {
      const next = followingNode(this.source, position);
      const empty = this.empty;
      this.empty = null;
      if (!(empty !== null ? this.reader.open(empty.uri, empty.local, true, empty.nil, next) : this.reader.close(next))) {
        if (this.reader.failure?.kind !== 'value') return this.stop();
        this.valueFailed = true;
        this.depth--;
        return;
      }
    }
    if (depth === 2) this.section = null;
    this.depth--;
    if (depth === 1) {
      const refused = afterRootError(this.source, position);
      if (refused !== null) throw new Refused(`${refused.message} ${this.position(refused.index)}`);
      this.stop();
    }
  }

  result(): ScanOutcome {
    const { root, hasBody, bodyMisplaced, bodyChild, mustUnderstand, source } = this;
    if (root === null) return { ok: false, message: ParserMessages.rootMissing, root, bodyChild, routed: false };
    const params = this.reader?.values ?? new Map<string, ReadValue>();
    const failure = this.reader?.failure ?? null;
    return { ok: true, scan: { root, hasBody, bodyMisplaced, bodyChild, params, failure, mustUnderstand, source } };
  }

  private envelopeChild(uri: string, local: string, empty: boolean): void {
    const first = !this.sawEnvelopeChild;
    this.sawEnvelopeChild = true;
    this.section = null;
    if (this.hasBody) return;
    if (uri === this.root!.ns && local === 'Body') {
      this.hasBody = true;
      this.section = 'Body';
      if (this.plan.named !== undefined) this.reader = new ParamReader(this.plan.named);
      if (empty) this.route(null);
    } else if (first && uri === this.root!.ns && local === 'Header') this.section = 'Header';
    else this.misplaced();
  }

  /** ReadParameters looks for the Body right after the Header and, not finding it there, reads no further. */
  private misplaced(): void {
    this.bodyMisplaced = true;
    if (this.plan.named !== undefined || this.routed) this.stop();
  }

  /** What SOAP 1.2's routing finds first in the Body (GetRequestElement); with nothing to route to, ASMX reads no further. */
  private route(child: QName | null): void {
    this.routed = true;
    this.bodyChild = child;
    if (this.plan.named !== undefined) return;
    const op = child === null ? undefined : this.plan.byElement(child.ns, child.local);
    if (op === undefined || this.bodyMisplaced) this.stop();
    else this.reader = new ParamReader(op);
  }

  private stop(): void {
    this.stopped = true;
  }

  /** A value did not convert, and the node after it is being read. */
  get afterValueFailure(): boolean {
    return this.valueFailed && !this.stopped;
  }

  /** Whether this node is the one after a value that did not convert: it has come whole, and the reading ends. */
  private nodeAfterFailure(): boolean {
    if (!this.valueFailed) return false;
    this.stop();
    return true;
  }
}

/**
 * Where .NET's reader stands after an element: on the text right after it (even blank), else on
 * the next node's name or content.
 */
function followingNode(source: string, after: number): number {
  // A reference to an entity XML does not declare is a node of its own, placed at its name.
  if (source[after] === '&') return /^&(#|lt;|gt;|amp;|apos;|quot;)/.test(source.slice(after, after + 6)) ? after : after + 1;
  if (source[after] !== '<') return after;
  const c = source[after + 1];
  if (c === '/' || c === '?') return after + 2;
  if (c === '!') return after + (source.startsWith('<!--', after) ? 4 : source.startsWith('<![CDATA[', after) ? 9 : 1);
  return after + 1;
}
