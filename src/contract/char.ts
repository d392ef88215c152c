import { Errors, NumberReasons } from '../basics/errors';

/**
 * The rules for a System.Char parameter (show_active), in one place. SOAP carries the UTF-16 code
 * as an xsd:unsignedShort ("49" for '1'); HTTP GET/POST carry the character itself.
 */

/** .NET number parsing allows leading and trailing white space (U+0009..U+000D, U+0020), no sign. */
const UINT16_TEXT = /^[\t\n\v\f\r ]*([0-9]+)[\t\n\v\f\r ]*$/;

/** The char a SOAP code stands for, or the .NET reason it does not convert (XmlConvert.ToUInt16). */
export function charFromSoapCode(text: string): { char: string } | { reasons: readonly string[] } {
  const digits = UINT16_TEXT.exec(text)?.[1];
  if (digits === undefined) return { reasons: NumberReasons.format };
  const value = BigInt(digits);
  if (value > 0xffffffffn) return { reasons: NumberReasons.overflow32 };
  if (value > 0xffffn) return { reasons: NumberReasons.overflow };
  return { char: String.fromCharCode(Number(value)) };
}

/** An absent SOAP char parameter is default(char). */
export const ABSENT_CHAR = '\0';

/** The char of an HTTP GET/POST value: exactly one UTF-16 code unit, else the ASMX conversion error. */
export function charFromHttpValue(value: string): string {
  if (value.length !== 1) throw Errors.cannotConvertChar(value);
  return value;
}
