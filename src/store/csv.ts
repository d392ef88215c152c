/**
 * A strict, streaming RFC 4180 reader for the import files. Strict because the files come from
 * spreadsheets and hand edits, and a silently misread row would put wrong names or tokens in front
 * of parents; streaming because a district's file may be larger than the memory we may use.
 *
 * Accepted: UTF-8 text with or without a BOM, CRLF or LF line ends (mixed is fine), fields quoted
 * with `"` where `""` is a literal quote and line breaks inside quotes are part of the value.
 * Every problem is reported with the 1-based physical line on which its record starts.
 *
 * Not csv-parse: its errors would be mapped back to these messages and its recovery after a bad
 * line matched to this one's, invalid UTF-8 would still need the check below (it decodes it
 * silently), and it took four times the processor time on a million-row students file (2.5 s
 * against 0.6 s, csv-parse 7.0.3, Node 24; the whole import of that file took 7 s of it).
 */

export interface CsvRecord {
  /** Physical line on which the record starts; a record may span lines through quoted breaks. */
  readonly line: number;
  readonly fields: string[];
}

export interface CsvProblem {
  readonly line: number;
  readonly reason: string;
}

/** Longest physical line, and longest quoted value, held while looking for its end. */
export const MAX_LINE = 1 << 20;

const QUOTE = '"';
const LF = 0x0a;

interface Partial {
  line: number;
  fields: string[];
  /** The quoted value read so far, when a quoted field continues on the next line. */
  value: string;
}

/**
 * Parses physical lines (without their LF) one at a time. A record whose quoted field spans lines
 * is held until its closing quote; blank lines are held until a record follows them, because
 * blank lines at the end of a file are an editor habit, not empty records.
 */
export class CsvParser {
  /** The physical line last read. */
  line = 0;
  private partial: Partial | null = null;
  private blanks: number[] = [];

  constructor(
    private readonly delimiter: string,
    private readonly onRecord: (record: CsvRecord) => void,
    private readonly onProblem: (problem: CsvProblem) => void,
  ) {}

  /** A line that could not be read at all: counted, and whatever record it was in is dropped. */
  skipLine(): void {
    this.line += 1;
    this.partial = null;
  }

  pushLine(text: string): void {
    this.line += 1;
    let rec = this.partial;
    this.partial = null;
    let i = 0;
    let quoted = rec !== null;
    if (rec === null) {
      if (text === '' || text === '\r') {
        this.blanks.push(this.line);
        return;
      }
      for (const line of this.blanks) this.onProblem({ line, reason: 'empty line' });
      this.blanks = [];
      rec = { line: this.line, fields: [], value: '' };
    }
    // A CR right before the LF belongs to the line break; anywhere else outside quotes it is an error.
    const end = text.endsWith('\r') ? text.length - 1 : text.length;
    const fail = (reason: string): void => this.onProblem({ line: rec!.line, reason });

    for (;;) {
      let value: string;
      if (quoted || text[i] === QUOTE) {
        if (!quoted) i += 1;
        value = rec.value;
        for (;;) {
          const q = text.indexOf(QUOTE, i);
          if (q === -1) {
            rec.value = `${value + text.slice(i)}\n`;
            if (rec.value.length > MAX_LINE) fail(`quoted field longer than ${MAX_LINE} characters (is a closing quote missing?)`);
            else this.partial = rec;
            return;
          }
          value += text.slice(i, q);
          if (text[q + 1] === QUOTE) {
            value += QUOTE;
            i = q + 2;
          } else {
            i = q + 1;
            break;
          }
        }
        quoted = false;
        rec.value = '';
        if (i < end && text[i] !== this.delimiter) {
          return fail(`unexpected character after closing quote in field ${rec.fields.length + 1}`);
        }
      } else {
        const from = i;
        for (; i < end && text[i] !== this.delimiter; i += 1) {
          if (text[i] === QUOTE)
            return fail(`quote in unquoted field ${rec.fields.length + 1} (quote the whole field and double the quote)`);
          if (text[i] === '\r') return fail('carriage return not followed by a line feed');
        }
        value = text.slice(from, i);
      }
      rec.fields.push(value);
      if (i < end) {
        i += 1; // the delimiter
        continue;
      }
      this.onRecord({ line: rec.line, fields: rec.fields });
      return;
    }
  }

  end(): void {
    if (this.partial !== null) {
      this.onProblem({ line: this.partial.line, reason: 'unterminated quoted field (no closing quote before end of file)' });
      this.partial = null;
    }
  }
}

/**
 * Streams a file through the parser with bounded memory. Bytes are split into lines at LF (a byte
 * UTF-8 never uses inside a character) before decoding, so a byte sequence that is not UTF-8 is
 * reported on its own line. Records are handed over in batches, one per chunk read, and the next
 * chunk is read only once `onRecords` has finished: a slow database slows the reading down.
 */
export async function readCsv(
  input: AsyncIterable<Uint8Array>,
  delimiter: string,
  onRecords: (records: CsvRecord[]) => Promise<void>,
  onProblem: (problem: CsvProblem) => void,
): Promise<number> {
  let batch: CsvRecord[] = [];
  const parser = new CsvParser(delimiter, (r) => batch.push(r), onProblem);
  const fatal = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  const lossy = new TextDecoder('utf-8', { ignoreBOM: true });
  let first = true;

  const feed = (bytes: Uint8Array): void => {
    let text: string;
    try {
      text = fatal.decode(bytes);
    } catch {
      // Rare: find the guilty lines one by one, and read them with U+FFFD so later checks still run.
      text = splitBytes(bytes)
        .map((line, n) => {
          try {
            return fatal.decode(line);
          } catch {
            onProblem({ line: parser.line + n + 1, reason: 'not valid UTF-8 text (save the file as UTF-8)' });
            return lossy.decode(line);
          }
        })
        .join('\n');
    }
    if (first && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    first = false;
    for (const line of text.split('\n')) parser.pushLine(line);
  };

  let carry: Uint8Array = new Uint8Array(0);
  let skipping = false;
  for await (const chunk of input) {
    let buf: Uint8Array = carry.length === 0 ? chunk : Buffer.concat([carry, chunk]);
    if (skipping) {
      const lf = buf.indexOf(LF);
      if (lf === -1) continue;
      skipping = false;
      parser.skipLine();
      buf = buf.subarray(lf + 1);
    }
    const cut = buf.lastIndexOf(LF);
    if (cut === -1) {
      carry = buf;
      if (carry.length > MAX_LINE) {
        onProblem({ line: parser.line + 1, reason: `line longer than ${MAX_LINE} bytes` });
        carry = new Uint8Array(0);
        skipping = true;
      }
      continue;
    }
    feed(buf.subarray(0, cut));
    carry = Uint8Array.prototype.slice.call(buf, cut + 1);
    if (batch.length > 0) {
      const records = batch;
      batch = [];
      await onRecords(records);
    }
  }
  if (carry.length > 0 && !skipping) feed(carry);
  parser.end();
  if (batch.length > 0) await onRecords(batch);
  return parser.line;
}

function splitBytes(bytes: Uint8Array): Uint8Array[] {
  const lines: Uint8Array[] = [];
  let from = 0;
  for (let lf = bytes.indexOf(LF); lf !== -1; lf = bytes.indexOf(LF, from)) {
    lines.push(bytes.subarray(from, lf));
    from = lf + 1;
  }
  lines.push(bytes.subarray(from));
  return lines;
}
