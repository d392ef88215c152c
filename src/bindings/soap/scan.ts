import sax from 'sax';
import { ParserMessages } from '../../basics/errors';
import { EnvelopeBuilder, type ReadPlan, Refused, type ScanOutcome, Stop, type XmlLimits } from './builder';
import { badReference, declarationError, firstInvalid, charArgs, invalidCharAt, undecodableAt, type XmlError } from './xml-rules';

/**
 * One strict pass over a SOAP request, before node-soap sees it, collecting what ASMX decides on
 * before and while it reads parameters (builder.ts), refusing what .NET's XmlTextReader refuses:
 * malformed XML, a DTD, a bad XML declaration, characters XML does not allow (raw or as references),
 * each with the reader's message and position.
 */

export type { EnvelopeScan, QName, ReadPlan, ScanOutcome, XmlLimits } from './builder';
export type { OperationPlan, ParamPlan } from './reading';

const SOAP11 = 'http://schemas.xmlsoap.org/soap/envelope/';
const SOAP12 = 'http://www.w3.org/2003/05/soap-envelope';

/** No operation known: the envelope is read, no parameters. */
export const NO_PLAN: ReadPlan = { envelopes: new Set([SOAP11, SOAP12]), named: undefined, byElement: () => undefined };

export function scanEnvelope(source: string, limits: XmlLimits, plan: ReadPlan = NO_PLAN): ScanOutcome {
  const at = (index: number) => position(source, index);
  const declaration = declarationError(source);
  if (declaration !== null)
    return { ok: false, message: `${declaration.message} ${at(declaration.index)}`, root: null, bodyChild: null, routed: false };
  if (source.trim() === '' && firstInvalid(source) === -1)
    return { ok: false, message: ParserMessages.rootMissing, root: null, bodyChild: null, routed: false };

  const parser = sax.parser(true, { xmlns: true, position: true, strictEntities: true } as sax.SAXOptions);
  const builder = new EnvelopeBuilder(source, limits, plan, () => `Line ${parser.line + 1}, position ${parser.column + 1}.`, at);

  parser.onerror = (e) => {
    throw e;
  };
  parser.ondoctype = () => {
    throw new Refused(ParserMessages.dtdProhibited);
  };
  /** Where each open element's name starts, for a mismatched end tag's message. */
  const starts: number[] = [];
  // Once the builder has stopped, sax is stopped too: nothing after that point is read.
  const stopped = () => {
    if (builder.stopped) throw new Stop();
  };
  parser.onopentag = (node) => {
    const tag = node as sax.QualifiedTag;
    starts.push(parser.startTagPosition);
    builder.open(tag.name, tag.uri, tag.local, Object.values(tag.attributes), tag.isSelfClosing);
    stopped();
  };
  parser.ontext = (text) => {
    builder.text(text, false);
    stopped();
  };
  parser.oncdata = (text) => {
    builder.text(text, true);
    stopped();
  };
  parser.oncomment = () => {
    // sax tells of a comment at its `--`, before it knows whether `>` follows.
    const dashes = commentDashes(source, parser.position);
    if (dashes !== -1 && source[dashes + 2] !== '>') throw new Refused(`${ParserMessages.invalidCommentChars} ${at(dashes)}`);
    builder.comment();
    stopped();
  };
  parser.onprocessinginstruction = (pi) => {
    // The XML declaration, checked above, is a processing instruction to sax.
    if (parser.startTagPosition !== 1 || pi.name !== 'xml') builder.processingInstruction(parser.startTagPosition + 1);
    stopped();
  };
  parser.onclosetag = () => {
    starts.pop();
    builder.close(parser.position);
    stopped();
  };
  try {
    feed(parser, source, starts);
  } catch (e) {
    if (e instanceof Stop) return builder.result();
    // After a value that did not convert, the next node may be a reference to an undeclared entity:
    // XmlTextReader reports it as an EntityReference node, an error only once resolved, so that
    // node has come (sax refuses it here).
    if (builder.afterValueFailure && undeclaredEntity(parser)) return builder.result();
    const message = e instanceof Refused ? e.message : parserMessage(e, parser, source, starts);
    return { ok: false, message, root: builder.root, bodyChild: builder.bodyChild, routed: builder.routed };
  }
  return builder.result();
}

/**
 * Gives sax the text up to each character XML does not allow, raw or as a reference, and refuses it
 * there with the message .NET's reader gives where it stands (sax's state says where that is); a
 * reference in a comment, CDATA or a processing instruction is no reference.
 */
function feed(parser: sax.SAXParser, source: string, starts: readonly number[]): void {
  let from = 0;
  const bad = firstInvalid(source);
  let ref = source.indexOf('&#');
  while (bad !== -1 || ref !== -1) {
    const next = bad === -1 ? ref : ref === -1 ? bad : Math.min(bad, ref);
    parser.write(source.slice(from, next));
    from = next;
    if (next === ref) {
      const state = SAX_STATE_NAMES[(parser as unknown as { state: number }).state];
      const e = state === 'TEXT' || state === 'ATTRIB_VALUE_QUOTED' ? badReference(source, ref) : null;
      if (e !== null) throw new Refused(`${e.message} ${position(source, e.index)}`);
      ref = source.indexOf('&#', ref + 2);
    } else {
      if (endsTheDocument(parser, source, bad)) throw new Refused(ParserMessages.rootMissing);
      const e = undecodableAt(source, bad) ?? charInPlace(parser, source, bad, starts);
      throw new Refused(`${e.message} ${position(source, e.index)}`);
    }
  }
  parser.write(source.slice(from)).close();
}

/**
 * A NUL where the reader looks for the root element (at the start, or just after the declaration, a
 * comment or a processing instruction; not after white space, which another routine reads) is the
 * end of the document to XmlTextReader (v1Compat: ParseDocumentContent takes it for the end of its
 * buffer), so the root element is missing. After the root, see afterRootError.
 */
function endsTheDocument(parser: sax.SAXParser, source: string, index: number): boolean {
  const p = parser as unknown as { state: number; tags: unknown[]; closedRoot: boolean };
  const state = SAX_STATE_NAMES[p.state];
  if (source.charCodeAt(index) !== 0 || p.tags.length > 0 || p.closedRoot || (state !== 'BEGIN' && state !== 'TEXT')) return false;
  return index === 0 || !/[ \t\r\n]/.test(source[index - 1]);
}

/** XmlTextReaderImpl.ThrowTagMismatch: the open element's name and where it starts, the end tag's name (up to what cannot be in a name). */
function tagMismatch(
  p: { tagName: string; tags: { name: string }[] },
  source: string,
  starts: readonly number[],
  at: number,
): XmlError | null {
  const open = p.tags[p.tags.length - 1];
  if (open === undefined || starts.length === 0) return null;
  const { line, column } = lineAndColumn(source, starts[starts.length - 1]);
  const end = /^[^\s>/]*/.exec(p.tagName)![0];
  return { message: ParserMessages.tagMismatch(open.name, line, column, end), index: at };
}

const position = (source: string, index: number) => {
  const { line, column } = lineAndColumn(source, index);
  return `Line ${line}, position ${column}.`;
};

/** A character XML does not allow, refused as XmlTextReaderImpl refuses it where sax stands. */
function charInPlace(parser: sax.SAXParser, source: string, index: number, starts: readonly number[]): XmlError {
  const p = parser as unknown as { state: number; tagName: string; sgmlDecl: string; procInstName: string; tags: { name: string }[] };
  const args = charArgs(source.charCodeAt(index), index + 1 < source.length ? source.charCodeAt(index + 1) : 0);
  const token = args[0];
  switch (SAX_STATE_NAMES[p.state]) {
    case 'OPEN_WAKA':
    case 'ATTRIB':
      return { message: ParserMessages.nameStart(...args), index };
    case 'OPEN_TAG':
      return { message: ParserMessages.nameChar(...args), index };
    case 'PROC_INST':
      return { message: p.procInstName === '' ? ParserMessages.nameStart(...args) : ParserMessages.nameChar(...args), index };
    case 'ATTRIB_NAME':
    case 'ATTRIB_NAME_SAW_WHITE':
      return { message: ParserMessages.unexpectedToken(token, '='), index };
    case 'ATTRIB_VALUE':
      return { message: ParserMessages.unexpectedTokens(token, '"', "'"), index };
    case 'CLOSE_TAG':
      if (p.tagName === '') return { message: ParserMessages.nameStart(...args), index };
      if (p.tagName !== p.tags[p.tags.length - 1]?.name)
        return tagMismatch(p, source, starts, index - p.tagName.length) ?? invalidCharAt(source, index);
      return { message: ParserMessages.unexpectedToken(token, '>'), index };
    case 'CLOSE_TAG_SAW_WHITE':
      return { message: ParserMessages.unexpectedToken(token, '>'), index };
    case 'SGML_DECL':
      return p.sgmlDecl === '-' ? { message: ParserMessages.unexpectedToken(token, '-'), index } : invalidCharAt(source, index);
    default:
      return invalidCharAt(source, index);
  }
}

/**
 * The parser's reason in .NET's words where clients see them, then where XmlReader reports it: at
 * the start of the offending token (the first character of text outside the root, the name of an
 * element with an undeclared prefix), else where the parser stopped.
 */
function parserMessage(e: unknown, parser: sax.SAXParser, source: string, starts: readonly number[]): string {
  const reason = e instanceof Error ? e.message.split('\n')[0] : '';
  const stopped = `Line ${parser.line + 1}, position ${parser.column + 1}.`;
  const atIndex = (index: number) => {
    const { line, column } = lineAndColumn(source, index);
    return `Line ${line}, position ${column}.`;
  };
  // Text outside the root element: sax stops just after its first character.
  if (/^(Non-whitespace before first tag|Text data outside of root node)/.test(reason))
    return `${ParserMessages.invalidRootData} ${atIndex(parser.position - 1)}`;
  if (/^Unexpected close tag/.test(reason)) {
    const mismatch = tagMismatch(
      parser as unknown as { tagName: string; tags: { name: string }[] },
      source,
      starts,
      parser.startTagPosition + 1,
    );
    if (mismatch !== null) return `${mismatch.message} ${atIndex(mismatch.index)}`;
  }
  if (/^Malformed comment/.test(reason)) {
    const dashes = commentDashes(source, parser.position);
    if (dashes !== -1) return `${ParserMessages.invalidCommentChars} ${atIndex(dashes)}`;
  }
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

/**
 * The first `--` of the comment that `position` is in or just past: where XmlTextReader refuses a
 * `--` inside a comment (or one ending `--->`), at its first `-`. -1 when there is no comment there.
 */
function commentDashes(source: string, position: number): number {
  const start = source.lastIndexOf('<!--', position - 1);
  return start === -1 ? -1 : source.indexOf('--', start + 4);
}

/** sax stopped on a reference to an entity XML does not declare (not a character reference) in text. */
function undeclaredEntity(parser: sax.SAXParser): boolean {
  const p = parser as unknown as { state: number; entity: string };
  return SAX_STATE_NAMES[p.state] === 'TEXT_ENTITY' && p.entity !== '' && p.entity[0] !== '#';
}

/** sax's parser states (exported by the library, not by its type declarations), by number and by name. */
const SAX_STATES = (sax as unknown as { STATE: Record<string, number> }).STATE;
const SAX_STATE_NAMES = SAX_STATES as unknown as Record<number, string>;

/**
 * The 1-based (line, column) of a 0-based source index, as .NET's XmlReader reports positions: a
 * line ends at LF, CR LF or a CR alone.
 */
export function lineAndColumn(source: string, index: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < index; i++) {
    const c = source.charCodeAt(i);
    if (c === 0x0a || (c === 0x0d && source.charCodeAt(i + 1) !== 0x0a)) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: index - lineStart + 1 };
}
