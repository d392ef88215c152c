/**
 * A strict RFC 4180 reader for the import files. Strict because the files come from spreadsheets and
 * hand edits, and a silently misread row would put wrong names or tokens in front of parents.
 *
 * Accepted: UTF-8 text with or without a BOM, CRLF or LF line ends (mixed is fine), fields quoted
 * with `"` where `""` is a literal quote and line breaks inside quotes are part of the value.
 * Every problem is reported with the 1-based physical line on which its record starts.
 */

export interface CsvRecord {
  /** Physical line on which the record starts; a record may span lines through quoted breaks. */
  readonly line: number;
  readonly fields: string[];
}

export interface CsvProblem {
  readonly line: number;
  readonly reason: string;
  /** 'fieldCount' problems are judged against the file's own header, so mean little if that is wrong. */
  readonly kind: 'syntax' | 'fieldCount';
}

export interface CsvTable {
  /** The record on line 1, or null when the file is empty or line 1 is malformed. */
  readonly header: CsvRecord | null;
  /** The records after the header whose field count matches it; none when there is no header. */
  readonly records: CsvRecord[];
  /** Everything wrong, in file order; a record with a problem is left out of `records`. */
  readonly problems: CsvProblem[];
}

/** Decodes bytes as UTF-8, rejecting malformed sequences instead of turning them into U+FFFD. */
export function decodeUtf8(bytes: Uint8Array): string {
  return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
}

const QUOTE = 0x22;
const COMMA = 0x2c;
const CR = 0x0d;
const LF = 0x0a;

export function parseCsv(input: string): CsvTable {
  const text = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input;
  // Line breaks at the very end are an editor habit, not empty records.
  let end = text.length;
  while (end > 0 && (text.charCodeAt(end - 1) === LF || text.charCodeAt(end - 1) === CR)) end -= 1;

  const rows: CsvRecord[] = [];
  const problems: CsvProblem[] = [];
  let pos = 0;
  let line = 1;

  /** Length of the line break at `at` (2 for CRLF, 1 for LF), 0 if there is none. */
  const lineBreak = (at: number): number => {
    const c = text.charCodeAt(at);
    if (c === LF) return 1;
    if (c === CR && text.charCodeAt(at + 1) === LF) return 2;
    return 0;
  };

  /**
   * After a syntax error, skip to the start of the next physical line: the only place where a new
   * record can be assumed to begin. This may report a spurious error on a continuation line of a
   * broken quoted field, but reporting too much beats hiding a second real mistake.
   */
  const resync = (): void => {
    while (pos < end) {
      const br = lineBreak(pos);
      if (br > 0) {
        pos += br;
        line += 1;
        return;
      }
      pos += 1;
    }
  };

  records: while (pos < end) {
    const startLine = line;

    const blank = lineBreak(pos);
    if (blank > 0) {
      problems.push({ kind: 'syntax', line: startLine, reason: 'empty line' });
      pos += blank;
      line += 1;
      continue;
    }

    const fields: string[] = [];
    for (;;) {
      let value: string;
      if (text.charCodeAt(pos) === QUOTE) {
        pos += 1;
        value = '';
        for (;;) {
          const q = text.indexOf('"', pos);
          if (q === -1 || q >= end) {
            problems.push({ kind: 'syntax', line: startLine, reason: 'unterminated quoted field (no closing quote before end of file)' });
            break records;
          }
          const chunk = text.slice(pos, q);
          for (let i = chunk.indexOf('\n'); i !== -1; i = chunk.indexOf('\n', i + 1)) line += 1;
          value += chunk;
          if (text.charCodeAt(q + 1) === QUOTE) {
            value += '"';
            pos = q + 2;
          } else {
            pos = q + 1;
            break;
          }
        }
        if (pos < end && text.charCodeAt(pos) !== COMMA && lineBreak(pos) === 0) {
          problems.push({ kind: 'syntax', line: startLine, reason: `unexpected character after closing quote in field ${fields.length + 1}` });
          resync();
          continue records;
        }
      } else {
        const from = pos;
        while (pos < end) {
          const c = text.charCodeAt(pos);
          if (c === COMMA || lineBreak(pos) > 0) break;
          if (c === QUOTE) {
            problems.push({ kind: 'syntax', line: startLine, reason: `quote in unquoted field ${fields.length + 1} (quote the whole field and double the quote)` });
            resync();
            continue records;
          }
          if (c === CR) {
            problems.push({ kind: 'syntax', line: startLine, reason: 'carriage return not followed by a line feed' });
            resync();
            continue records;
          }
          pos += 1;
        }
        value = text.slice(from, pos);
      }
      fields.push(value);

      if (pos >= end) break;
      if (text.charCodeAt(pos) === COMMA) {
        pos += 1;
        continue;
      }
      pos += lineBreak(pos);
      line += 1;
      break;
    }
    rows.push({ line: startLine, fields });
  }

  // Without a well-formed first line there is no header to count fields against.
  const header = rows[0]?.line === 1 ? rows[0] : null;
  const records: CsvRecord[] = [];
  if (header !== null) {
    for (const row of rows.slice(1)) {
      if (row.fields.length === header.fields.length) {
        records.push(row);
      } else {
        problems.push({ kind: 'fieldCount', line: row.line, reason: `expected ${header.fields.length} fields, found ${row.fields.length}` });
      }
    }
  }
  problems.sort((a, b) => a.line - b.line);
  return { header, records, problems };
}
