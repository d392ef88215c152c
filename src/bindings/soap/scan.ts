import sax from 'sax';
import { ParserMessages } from '../../basics/errors';

/**
 * One strict pass over a SOAP request, before node-soap sees it, collecting what ASMX decides on
 * before and while it reads parameters: is the XML well-formed and free of a DTD, which envelope
 * version is it, is there a Body and which element comes first in it, the text of each parameter
 * as XmlSerializer reads it (the first element of that name in the service namespace), and where
 * each parameter element ends (a value that does not convert is reported at the node after it).
 */

export interface QName {
  readonly ns: string;
  readonly local: string;
}

export interface ScannedParam {
  readonly text: string;
  /** xsi:nil="true" on an element with no content. */
  readonly nil: boolean;
  /** It held an element or a comment: ReadElementString refuses that as malformed. */
  readonly malformed: boolean;
  /** 0-based index in the source of the node that follows the element (of its name, for a tag). */
  readonly nextIndex: number;
}

export interface EnvelopeScan {
  readonly root: QName;
  readonly hasBody: boolean;
  /** The first element inside soap:Body, if any. */
  readonly bodyChild: QName | null;
  /** Children of bodyChild: the first of each expanded name, keyed `${ns} ${local}`. */
  readonly params: ReadonlyMap<string, ScannedParam>;
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
      /** The Body's first element, when it had started before the failure (ASMX was reading parameters). */
      bodyChild: QName | null;
    };

export const paramKey = (ns: string, local: string) => `${ns} ${local}`;

const XSI = 'http://www.w3.org/2001/XMLSchema-instance';

class Refused extends Error {}

interface OpenParam {
  key: string;
  text: string;
  nil: boolean;
  malformed: boolean;
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

/**
 * What a request's elements tell the front, whichever reader reads them: sax (scanEnvelope) or the
 * quick reader (quick-scan.ts) for the plain requests that make up most traffic. Both feed it the
 * same events, so each rule of what ASMX reads from the envelope is written once, here.
 */
export class EnvelopeBuilder {
  root: QName | null = null;
  bodyChild: QName | null = null;
  private hasBody = false;
  private mustUnderstand: string | null = null;
  private readonly params = new Map<string, ScannedParam>();
  // depth 1 = Envelope, 2 = Header/Body, 3 = operation element (or header entry), 4 = parameter
  private depth = 0;
  private section: 'Header' | 'Body' | null = null;
  /** Inside the first element of the Body: only its children are parameters. */
  private inFirstOp = false;
  private param: OpenParam | null = null;
  private elements = 0;

  /**
   * @param at where the reader stands, for a refusal's message (the quick reader gives up instead,
   * leaving the refusal to sax)
   */
  constructor(
    private readonly source: string,
    private readonly limits: XmlLimits,
    private readonly at: () => string,
  ) {}

  open(name: string, uri: string, local: string, attributes: Iterable<ScannedAttribute>): void {
    const depth = ++this.depth;
    if (depth > this.limits.maxDepth) throw new Refused(`${ParserMessages.tooDeep(this.limits.maxDepth)} ${this.at()}`);
    if (++this.elements > this.limits.maxElements) throw new Refused(`${ParserMessages.tooManyElements(this.limits.maxElements)} ${this.at()}`);
    if (depth === 1) {
      if (this.root !== null) throw new Refused(`There are multiple root elements. ${this.at()}`);
      this.root = { ns: uri, local };
    } else if (depth === 2) {
      this.section = uri === this.root?.ns && (local === 'Body' || local === 'Header') ? local : null;
      if (this.section === 'Body') this.hasBody = true;
    } else if (depth === 3 && this.section === 'Header' && this.mustUnderstand === null) {
      for (const a of attributes) {
        if (a.local === 'mustUnderstand' && a.uri === this.root?.ns) {
          if (a.value === '1' || a.value === 'true') this.mustUnderstand = name;
          break;
        }
      }
    } else if (depth === 3 && this.section === 'Body' && this.bodyChild === null) {
      this.bodyChild = { ns: uri, local };
      this.inFirstOp = true;
    } else if (depth === 4 && this.inFirstOp) {
      const key = paramKey(uri, local);
      if (!this.params.has(key)) {
        let nil = false;
        for (const a of attributes) if (a.local === 'nil' && a.uri === XSI && (a.value === 'true' || a.value === '1')) nil = true;
        this.param = { key, text: '', nil, malformed: false };
      }
    } else if (depth > 4 && this.param !== null) {
      this.param.malformed = true;
    }
  }

  text(text: string): void {
    if (this.param !== null && this.depth === 4) this.param.text += text;
  }

  comment(): void {
    if (this.param !== null) this.param.malformed = true;
  }

  /** @param position the index just past the end tag's `>` */
  close(position: number): void {
    const { depth, param } = this;
    if (depth === 4 && param !== null) {
      this.params.set(param.key, {
        text: param.text,
        nil: param.nil && param.text === '',
        malformed: param.malformed,
        nextIndex: followingNode(this.source, position),
      });
      this.param = null;
    }
    if (depth === 3) this.inFirstOp = false;
    if (depth === 2) this.section = null;
    this.depth--;
  }

  result(): ScanOutcome {
    const { root, hasBody, bodyChild, params, mustUnderstand, source } = this;
    if (root === null) return { ok: false, message: ParserMessages.rootMissing, root, bodyChild };
    return { ok: true, scan: { root, hasBody, bodyChild, params, mustUnderstand, source } };
  }
}

export function scanEnvelope(source: string, limits: XmlLimits): ScanOutcome {
  if (source.trim() === '') return { ok: false, message: ParserMessages.rootMissing, root: null, bodyChild: null };

  const parser = sax.parser(true, { xmlns: true, position: true, strictEntities: true } as sax.SAXOptions);
  const builder = new EnvelopeBuilder(source, limits, () => `Line ${parser.line + 1}, position ${parser.column + 1}.`);

  parser.onerror = (e) => {
    throw e;
  };
  parser.ondoctype = () => {
    throw new Refused(ParserMessages.dtdProhibited);
  };
  parser.onopentag = (node) => {
    const tag = node as sax.QualifiedTag;
    builder.open(tag.name, tag.uri, tag.local, Object.values(tag.attributes));
  };
  const onText = (text: string) => builder.text(text);
  parser.ontext = onText;
  parser.oncdata = onText;
  parser.oncomment = () => builder.comment();
  parser.onclosetag = () => builder.close(parser.position);
  try {
    parser.write(source).close();
  } catch (e) {
    const message = e instanceof Refused ? e.message : parserMessage(e, parser, source);
    return { ok: false, message, root: builder.root, bodyChild: builder.bodyChild };
  }
  return builder.result();
}

/**
 * Where .NET's reader stands after an element: on the text right after it (even blank), else on
 * the name of the next tag.
 */
function followingNode(source: string, after: number): number {
  if (source[after] !== '<') return after;
  return source[after + 1] === '/' ? after + 2 : after + 1;
}

/**
 * The parser's reason in .NET's words where clients see them, then where XmlReader reports it: at
 * the start of the offending token (the first character of text outside the root, the name of an
 * element with an undeclared prefix), else where the parser stopped.
 */
function parserMessage(e: unknown, parser: sax.SAXParser, source: string): string {
  const reason = e instanceof Error ? e.message.split('\n')[0] : '';
  const stopped = `Line ${parser.line + 1}, position ${parser.column + 1}.`;
  const atIndex = (index: number) => {
    const { line, column } = lineAndColumn(source, index);
    return `Line ${line}, position ${column}.`;
  };
  // Text outside the root element: sax stops just after its first character.
  if (/^(Non-whitespace before first tag|Text data outside of root node)/.test(reason)) return `${ParserMessages.invalidRootData} ${atIndex(parser.position - 1)}`;
  const prefix = /^Unbound namespace prefix: "([^":]+):/.exec(reason);
  if (prefix) return `${ParserMessages.undeclaredPrefix(prefix[1])} ${atIndex(parser.startTagPosition)}`;
  // XmlTextReaderImpl.ParseDocumentContent reads a tag at the root level only with 4 characters in
  // hand ("<a/>", the shortest element): a document ending sooner is invalid root data at its `<`.
  const tagAt = parser.startTagPosition - 1;
  const { tags, closedRoot } = parser as unknown as { tags: unknown[]; closedRoot: boolean };
  if (/unexpected end/i.test(reason) && tags.length === 0 && !closedRoot && source[tagAt] === '<' && source.length - tagAt < 4) {
    return `${ParserMessages.invalidRootData} ${atIndex(tagAt)}`;
  }
  if (/unclosed root tag|unexpected end/i.test(reason)) {
    const inLiteral = (parser as unknown as { state: number }).state === SAX_STATES.ATTRIB_VALUE_QUOTED;
    return `${inLiteral ? ParserMessages.unclosedLiteral : ParserMessages.unexpectedEof} ${stopped}`;
  }
  const sentence = reason === '' ? 'The XML is not well-formed.' : reason.endsWith('.') ? reason : `${reason}.`;
  return `${sentence} ${stopped}`;
}

/** sax's parser states (exported by the library, not by its type declarations). */
const SAX_STATES = (sax as unknown as { STATE: Record<string, number> }).STATE;

/** The 1-based (line, column) of a 0-based source index, as .NET's XmlReader reports positions. */
export function lineAndColumn(source: string, index: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = source.indexOf('\n'); i !== -1 && i < index; i = source.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: index - lineStart + 1 };
}
