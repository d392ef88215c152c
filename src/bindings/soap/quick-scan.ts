import { EnvelopeBuilder, type ReadPlan, Refused, type ScanOutcome, type ScannedAttribute, type XmlLimits } from './builder';
import { NO_PLAN } from './scan';
import { allValid } from './xml-rules';

/**
 * The quick reader: most SOAP requests are plain (an optional XML declaration, elements and
 * attributes with ASCII names, namespace declarations, text without entities), and for those a
 * pass of indexOf and character tests gives exactly what sax's pass gives (scanEnvelope), at a
 * fraction of its cost and garbage. Anything else (a comment, CDATA, a processing instruction, a
 * DTD, an entity or character reference, a name outside ASCII, a byte-order mark, whitespace around
 * `=`, an undeclared prefix, a character XML does not allow, a limit reached, anything malformed,
 * anything but white space after the root) makes it give up with null, and
 * the request is read by sax as before: every refusal and every position in an error message stays
 * sax's. test/quick-scan.test.ts holds the two readers to the same outcome over the recorded corpora
 * and the fuzzer's mutations.
 */

const XML_NS = 'http://www.w3.org/XML/1998/namespace';
const XMLNS_NS = 'http://www.w3.org/2000/xmlns/';

/** Only this form of the declaration is taken; sax reads any other. */
const DECLARATION =
  /^<\?xml[ \t\r\n]+version=(?:"1\.0"|'1\.0')(?:[ \t\r\n]+encoding=(?:"[A-Za-z][\w.-]*"|'[A-Za-z][\w.-]*'))?(?:[ \t\r\n]+standalone=(?:"(?:yes|no)"|'(?:yes|no)'))?[ \t\r\n]*\?>/;

/** Thrown (through the builder's position callback too) to leave the request to sax. */
class GiveUp extends Error {}
const giveUp = (): never => {
  throw new GiveUp();
};

const NO_ATTRIBUTES: readonly ScannedAttribute[] = [];

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d;
const isNameStart = (c: number) => (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f;
const isNameChar = (c: number) => isNameStart(c) || (c >= 0x30 && c <= 0x3a) || c === 0x2e || c === 0x2d;

/** The index just past a name starting at `i` (ASCII letters, digits, `_.-:`), or -1. */
function nameEnd(source: string, i: number): number {
  if (!isNameStart(source.charCodeAt(i))) return -1;
  let j = i + 1;
  while (isNameChar(source.charCodeAt(j))) j++;
  return j;
}

function allSpace(source: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (!isSpace(source.charCodeAt(i))) return false;
  return true;
}

/** Namespace bindings in scope, innermost last. */
class Scope {
  private readonly prefixes: string[] = ['xml'];
  private readonly uris: string[] = [XML_NS];
  private readonly marks: number[] = [];

  enter(): void {
    this.marks.push(this.prefixes.length);
  }

  leave(): void {
    const mark = this.marks.pop()!;
    this.prefixes.length = mark;
    this.uris.length = mark;
  }

  bind(prefix: string, uri: string): void {
    this.prefixes.push(prefix);
    this.uris.push(uri);
  }

  /** The prefix's namespace; '' for no prefix and no default; undefined when undeclared. */
  lookup(prefix: string): string | undefined {
    for (let k = this.prefixes.length - 1; k >= 0; k--) if (this.prefixes[k] === prefix) return this.uris[k];
    return prefix === '' ? '' : undefined;
  }
}

/** Splits `p:local` into its prefix ('' for none) and local part, or null when it is not one name. */
function split(name: string): [string, string] | null {
  const colon = name.indexOf(':');
  if (colon === -1) return ['', name];
  if (colon === 0 || colon === name.length - 1 || name.indexOf(':', colon + 1) !== -1) return null;
  return [name.slice(0, colon), name.slice(colon + 1)];
}

/** What scanEnvelope would give for a plain request, or null to leave the request to it. */
export function quickScan(source: string, limits: XmlLimits, plan: ReadPlan = NO_PLAN): ScanOutcome | null {
  if (!allValid(source)) return null;
  const builder = new EnvelopeBuilder(source, limits, plan, giveUp, giveUp);
  try {
    return read(source, builder);
  } catch (e) {
    // The reading ended where ASMX's ends; a refusal's message is sax's to give.
    if (e instanceof GiveUp || e instanceof Refused) return null;
    throw e;
  }
}

function read(source: string, builder: EnvelopeBuilder): ScanOutcome | null {
  const n = source.length;
  const scope = new Scope();
  /** The names of the open elements, for their end tags. */
  const open: string[] = [];
  let sawRoot = false;
  let i = 0;
  if (source.startsWith('<?')) {
    const declaration = DECLARATION.exec(source);
    if (declaration === null) return null;
    i = declaration[0].length;
  }
  while (i < n) {
    const lt = source.indexOf('<', i);
    const textEnd = lt === -1 ? n : lt;
    if (textEnd > i) {
      if (open.length === 0) {
        if (!allSpace(source, i, textEnd)) return null;
      } else {
        const amp = source.indexOf('&', i);
        if (amp !== -1 && amp < textEnd) return null;
        builder.text(source.slice(i, textEnd), false);
        if (builder.stopped) return builder.result();
      }
    }
    if (lt === -1) break;
    i = lt + 1;

    if (source.charCodeAt(i) === 0x2f) {
      // An end tag: its name, optional white space, '>'.
      const end = nameEnd(source, i + 1);
      if (end === -1 || open.pop() !== source.slice(i + 1, end)) return null;
      i = end;
      while (isSpace(source.charCodeAt(i))) i++;
      if (source.charCodeAt(i) !== 0x3e) return null;
      i++;
      builder.close(i);
      if (builder.stopped) return builder.result();
      scope.leave();
      continue;
    }

    // A start tag. A second root is sax's to report.
    if (open.length === 0 && sawRoot) return null;
    const end = nameEnd(source, i);
    if (end === -1) return null;
    const name = source.slice(i, end);
    i = end;
    scope.enter();
    /** Names and values, alternating. */
    let raw: string[] | null = null;
    let selfClosing: boolean;
    for (;;) {
      const c = source.charCodeAt(i);
      if (c === 0x3e) {
        i++;
        selfClosing = false;
        break;
      }
      if (c === 0x2f) {
        if (source.charCodeAt(i + 1) !== 0x3e) return null;
        i += 2;
        selfClosing = true;
        break;
      }
      if (!isSpace(c)) return null;
      while (isSpace(source.charCodeAt(i))) i++;
      const next = source.charCodeAt(i);
      if (next === 0x3e || next === 0x2f) continue;
      const attrEnd = nameEnd(source, i);
      if (attrEnd === -1 || source.charCodeAt(attrEnd) !== 0x3d) return null;
      const quote = source.charCodeAt(attrEnd + 1);
      if (quote !== 0x22 && quote !== 0x27) return null;
      const close = source.indexOf(quote === 0x22 ? '"' : "'", attrEnd + 2);
      if (close === -1) return null;
      const attrName = source.slice(i, attrEnd);
      const value = source.slice(attrEnd + 2, close);
      if (value.includes('<') || value.includes('&')) return null;
      raw ??= [];
      for (let k = 0; k < raw.length; k += 2) if (raw[k] === attrName) return null;
      raw.push(attrName, value);
      if (attrName === 'xmlns') scope.bind('', value);
      else if (attrName.startsWith('xmlns:')) {
        const prefix = attrName.slice(6);
        if (value === '' || prefix === '' || prefix === 'xml' || prefix === 'xmlns' || prefix.includes(':')) return null;
        scope.bind(prefix, value);
      }
      i = close + 1;
    }

    const parts = split(name);
    if (parts === null || parts[0] === 'xmlns') return null;
    const uri = scope.lookup(parts[0]);
    if (uri === undefined) return null;
    const attributes = raw === null ? NO_ATTRIBUTES : resolveAttributes(raw, scope);
    if (attributes === null) return null;
    sawRoot = true;
    builder.open(name, uri, parts[1], attributes, selfClosing);
    if (builder.stopped) return builder.result();
    if (selfClosing) {
      builder.close(i);
      if (builder.stopped) return builder.result();
      scope.leave();
    } else open.push(name);
  }
  if (open.length !== 0 || !sawRoot) return null;
  return builder.result();
}

/** Attributes with their namespaces as sax reports them (an unprefixed one has none), or null. */
function resolveAttributes(raw: readonly string[], scope: Scope): ScannedAttribute[] | null {
  const attributes: ScannedAttribute[] = [];
  for (let k = 0; k < raw.length; k += 2) {
    const name = raw[k];
    const parts = split(name);
    if (parts === null) return null;
    const [prefix, local] = parts;
    if (name === 'xmlns') attributes.push({ uri: XMLNS_NS, local: '', value: raw[k + 1] });
    else if (prefix === 'xmlns') attributes.push({ uri: XMLNS_NS, local, value: raw[k + 1] });
    else if (prefix === '') attributes.push({ uri: '', local, value: raw[k + 1] });
    else {
      const uri = scope.lookup(prefix);
      if (uri === undefined) return null;
      attributes.push({ uri, local, value: raw[k + 1] });
    }
  }
  return attributes;
}
