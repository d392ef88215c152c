/**
 * A SOAP request's Content-Type as ASMX reads it (System.Web.Services' ContentType, Scalars.cs),
 * which is not RFC 7231's grammar:
 * - the media type is everything before the first `;`, compared without regard to case but not
 *   trimmed: `text/xml ; charset=utf-8` is not SOAP (415);
 * - a parameter is found by the start of its name (`charsetx=` is a charset), white space allowed
 *   before it and before `=`; its value is what follows `=`, with spaces, tabs and either quote
 *   trimmed from both ends; the first such parameter counts.
 */

export interface ContentType {
  /** The media type, lower-cased, as written (white space kept). */
  readonly type: string;
  /** Whether it is `application` (ContentType.IsApplication), which leaves the encoding to the XML reader. */
  readonly application: boolean;
  readonly charset: string | undefined;
  /** SOAP 1.2's `action` parameter. */
  readonly action: string | undefined;
}

export const TEXT_XML = 'text/xml';
export const APPLICATION_SOAP = 'application/soap+xml';

export function parseContentType(value: string | undefined): ContentType {
  const header = value ?? '';
  const semi = header.indexOf(';');
  const type = (semi === -1 ? header : header.slice(0, semi)).toLowerCase();
  const slash = type.indexOf('/');
  return {
    type,
    application: (slash === -1 ? type : type.slice(0, slash)) === 'application',
    charset: semi === -1 ? undefined : parameter(header, 'charset')?.toLowerCase(),
    action: semi === -1 ? undefined : parameter(header, 'action'),
  };
}

/** ContentType.IsSoap: text/xml or application/soap+xml. */
export const isSoap = (ct: ContentType): boolean => ct.type === TEXT_XML || ct.type === APPLICATION_SOAP;

const TRIMMED = /^[ '"\t]+|[ '"\t]+$/g;

/** ContentType.GetParameter. */
function parameter(header: string, name: string): string | undefined {
  const declarations = header.split(';');
  for (let i = 1; i < declarations.length; i++) {
    const declaration = declarations[i].trimStart();
    if (declaration.slice(0, name.length).toLowerCase() !== name) continue;
    const eq = declaration.indexOf('=', name.length);
    if (eq >= 0) return declaration.slice(eq + 1).replace(TRIMMED, '');
  }
  return undefined;
}
