import { escapeAttribute, escapeText } from '../basics/escape';
import type { OperationSpec } from '../contract/operations';
import { STUDENT_FIELDS, type Result, type StudentInfo } from '../contract/types';
import { lastingBodies } from '../transport/exchange';

/**
 * The XML an ASMX host writes for each result, compiled per operation at start: every constant
 * (namespace, element names, declarations) is baked into strings so the hot path only escapes and
 * concatenates values. SOAP answers are compact; HTTP GET/POST answers are indented with CRLF, as
 * .NET's XmlSerializer writes them.
 */

const XSI_XSD = 'xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"';
const DECLARATION = '<?xml version="1.0" encoding="utf-8"?>';

function element(name: string, value: string, indent = ''): string {
  return value === '' ? `${indent}<${name} />` : `${indent}<${name}>${escapeText(value)}</${name}>`;
}

/**
 * One StudentInfo element, its constant markup built once: the loop per student only escapes and
 * appends. `indent` null is the compact SOAP form; otherwise each line is indented and ends in CRLF.
 */
function compileStudent(indent: string | null): (s: StudentInfo) => string {
  const inner = indent === null ? '' : `${indent}  `;
  const eol = indent === null ? '' : '\r\n';
  const fields = STUDENT_FIELDS.map((f) => ({ name: f, empty: `${inner}<${f} />${eol}`, open: `${inner}<${f}>`, close: `</${f}>${eol}` }));
  const open = indent === null ? '<StudentInfo>' : `${indent}<StudentInfo>\r\n`;
  const close = indent === null ? '</StudentInfo>' : `${indent}</StudentInfo>`;
  return (s) => {
    let xml = open;
    for (const f of fields) {
      const value = s[f.name];
      xml += value === '' ? f.empty : f.open + escapeText(value) + f.close;
    }
    return xml + close;
  };
}

/**
 * A result the store froze (a cached roster) never changes, so the XML written for it is kept with
 * it, as long as the result itself is kept: a roster asked for again is answered without rendering.
 */
function keptForFrozen<R extends object>(render: (r: R) => string): (r: R) => string {
  const rendered = new WeakMap<R, string>();
  return (r) => {
    if (!Object.isFrozen(r)) return render(r);
    let xml = rendered.get(r);
    if (xml === undefined) rendered.set(r, (xml = render(r)));
    return xml;
  };
}

/**
 * The encoded bytes of answers to frozen results, kept as long as the result is: a cached roster
 * asked for again goes out without rendering or encoding (on a 500-student roster, encoding the
 * text to UTF-8 on every request was most of the work left).
 */
export class KeptBytes {
  private readonly kept = new WeakMap<object, Buffer>();

  /** The answer to `result`: `render`'s text, or the bytes kept for this very (frozen) result. */
  of(result: Result, render: () => string): string | Buffer;
  of(result: Result, render: () => string | null): string | Buffer | null;
  of(result: Result, render: () => string | null): string | Buffer | null {
    if (typeof result !== 'object' || result === null || !Object.isFrozen(result)) return render();
    let bytes = this.kept.get(result);
    if (bytes === undefined) {
      const text = render();
      if (text === null) return null;
      this.kept.set(result, (bytes = Buffer.from(text, 'utf8')));
      lastingBodies.add(bytes);
    }
    return bytes;
  }
}

export interface AnswerWriter {
  /** The Body child of a SOAP answer: `<OpResponse xmlns="ns">…</OpResponse>`. */
  soap(result: Result): string;
  /** An HTTP GET/POST answer document, or null for a void operation (an empty 200). */
  http(result: Result): string | null;
}

export function compileAnswerWriter(op: OperationSpec, ns: string): AnswerWriter {
  const xmlns = `xmlns="${escapeAttribute(ns)}"`;
  const response = `${op.name}Response`;
  const resultName = `${op.name}Result`;
  const emptyResponse = `<${response} ${xmlns} />`;
  const open = `<${response} ${xmlns}>`;
  const close = `</${response}>`;

  switch (op.result) {
    case 'void':
      return { soap: () => emptyResponse, http: () => null };
    case 'string': {
      const nil = `${DECLARATION}\r\n<string ${XSI_XSD} xsi:nil="true" ${xmlns} />`;
      return {
        soap: (r) => (typeof r === 'string' ? open + element(resultName, r) + close : emptyResponse),
        http: (r) =>
          typeof r !== 'string'
            ? nil
            : r === ''
              ? `${DECLARATION}\r\n<string ${xmlns} />`
              : `${DECLARATION}\r\n<string ${xmlns}>${escapeText(r)}</string>`,
      };
    }
    case 'students': {
      const rootOpen = `${DECLARATION}\r\n<ArrayOfStudentInfo ${XSI_XSD} ${xmlns}`;
      const soapStudent = compileStudent(null);
      const httpStudent = compileStudent('  ');
      return {
        soap: keptForFrozen((list: StudentInfo[]) => {
          if (list.length === 0) return `${open}<${resultName} />${close}`;
          let xml = `${open}<${resultName}>`;
          for (const s of list) xml += soapStudent(s);
          return `${xml}</${resultName}>${close}`;
        }) as (r: Result) => string,
        http: keptForFrozen((list: StudentInfo[]) => {
          if (list.length === 0) return `${rootOpen} />`;
          let xml = `${rootOpen}>\r\n`;
          for (const s of list) xml += `${httpStudent(s)}\r\n`;
          return `${xml}</ArrayOfStudentInfo>`;
        }) as (r: Result) => string,
      };
    }
  }
}
