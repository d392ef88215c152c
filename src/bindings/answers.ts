import { escapeAttribute, escapeText } from '../escape';
import type { OperationSpec } from '../services/contract';
import { STUDENT_FIELDS, type Result, type StudentInfo } from '../services/types';

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

function studentXml(s: StudentInfo, indent: string | null): string {
  if (indent === null) {
    return `<StudentInfo>${STUDENT_FIELDS.map((f) => element(f, s[f])).join('')}</StudentInfo>`;
  }
  const inner = indent + '  ';
  return (
    `${indent}<StudentInfo>\r\n` +
    STUDENT_FIELDS.map((f) => element(f, s[f], inner) + '\r\n').join('') +
    `${indent}</StudentInfo>`
  );
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
      return {
        soap: (r) => {
          const list = r as StudentInfo[];
          if (list.length === 0) return `${open}<${resultName} />${close}`;
          return `${open}<${resultName}>${list.map((s) => studentXml(s, null)).join('')}</${resultName}>${close}`;
        },
        http: (r) => {
          const list = r as StudentInfo[];
          if (list.length === 0) return `${rootOpen} />`;
          return `${rootOpen}>\r\n${list.map((s) => studentXml(s, '  ') + '\r\n').join('')}</ArrayOfStudentInfo>`;
        },
      };
    }
  }
}
