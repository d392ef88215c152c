import sax from 'sax';
import { ParserMessages } from '../../errors';

/**
 * One strict pass over a SOAP request, before node-soap sees it, collecting what ASMX decides on
 * before it reads parameters: is the XML well-formed and free of a DTD, which envelope version is
 * it, which element is the Body's first child, and where each parameter element ends (a parameter
 * that does not convert is reported at the position of the node that follows it).
 */

export interface QName {
  readonly ns: string;
  readonly local: string;
}

export interface ScannedParam {
  readonly text: string;
  /** 0-based index in the source of the first character of the name of the following node. */
  readonly nextNameIndex: number;
}

export interface EnvelopeScan {
  readonly root: QName;
  /** The first element inside soap:Body, if any. */
  readonly bodyChild: QName | null;
  /** The direct children of bodyChild by local name, with their namespace. */
  readonly params: ReadonlyMap<string, ScannedParam & { ns: string }>;
  readonly source: string;
}

export type ScanOutcome = { ok: true; scan: EnvelopeScan } | { ok: false; message: string };

class Refused extends Error {}

export function scanEnvelope(source: string): ScanOutcome {
  if (source.trim() === '') return { ok: false, message: ParserMessages.rootMissing };

  const parser = sax.parser(true, { xmlns: true, position: true });
  let root: QName | null = null;
  let bodyChild: QName | null = null;
  const params = new Map<string, ScannedParam & { ns: string }>();
  // depth 1 = Envelope, 2 = Header/Body, 3 = operation element, 4 = parameter
  let depth = 0;
  let inBody = false;
  let param: { local: string; ns: string; text: string } | null = null;
  let awaitingNext: { local: string; ns: string; text: string } | null = null;

  /** sax's startTagPosition is the 1-based index of '<'. */
  const settleAwaiting = (nameOffset: number) => {
    if (awaitingNext === null) return;
    const { local, ns, text } = awaitingNext;
    if (!params.has(local)) params.set(local, { ns, text, nextNameIndex: parser.startTagPosition - 1 + nameOffset });
    awaitingNext = null;
  };

  parser.onerror = (e) => {
    throw e;
  };
  parser.ondoctype = () => {
    throw new Refused(ParserMessages.dtdProhibited);
  };
  parser.onopentag = (node) => {
    const tag = node as sax.QualifiedTag;
    settleAwaiting(1);
    depth++;
    if (depth === 1) root = { ns: tag.uri, local: tag.local };
    else if (depth === 2) inBody = tag.local === 'Body' && tag.uri === root?.ns;
    else if (depth === 3 && inBody && bodyChild === null) bodyChild = { ns: tag.uri, local: tag.local };
    else if (depth === 4 && inBody && bodyChild !== null && param === null) param = { local: tag.local, ns: tag.uri, text: '' };
  };
  const onText = (text: string) => {
    if (param !== null && depth === 4) param.text += text;
  };
  parser.ontext = onText;
  parser.oncdata = onText;
  parser.onclosetag = () => {
    settleAwaiting(2);
    if (depth === 4 && param !== null) {
      awaitingNext = param;
      param = null;
    }
    if (depth === 2) inBody = false;
    depth--;
  };

  try {
    parser.write(source).close();
  } catch (e) {
    if (e instanceof Refused) return { ok: false, message: e.message };
    return { ok: false, message: parserMessage(e, parser) };
  }
  if (root === null) return { ok: false, message: ParserMessages.rootMissing };
  return { ok: true, scan: { root, bodyChild, params, source } };
}

/** A .NET-style message: the parser's reason, then where it happened. */
function parserMessage(e: unknown, parser: sax.SAXParser): string {
  const reason = e instanceof Error ? e.message.split('\n')[0] : 'Invalid XML.';
  if (/unclosed root tag|unexpected end/i.test(reason)) {
    return `Unexpected end of file has occurred. Line ${parser.line + 1}, position ${parser.column + 1}.`;
  }
  const sentence = reason.endsWith('.') ? reason : `${reason}.`;
  return `${sentence} Line ${parser.line + 1}, position ${parser.column + 1}.`;
}

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
