/**
 * ASP.NET request validation's two rules that more than one layer needs: what looks dangerous, and
 * which piece of a refused value the message quotes (the service's answer, the comparison's reading
 * of the legacy host's).
 */

/**
 * CrossSiteScriptingValidation.IsDangerousString: where `<` is followed by an ASCII letter, `!`, `/`
 * or `?`, or `&` by `#`; -1 when nowhere (a `<` or `&` that ends the value is harmless).
 */
export function dangerousAt(value: string): number {
  return value.search(/<[A-Za-z!/?]|&#/);
}

/**
 * HttpRequest.ValidateString's quote of a refused value: from 10 UTF-16 units before `at` to 20
 * after, with `...` where it cut; cut before HTML-encoding, so a surrogate pair may be split.
 */
export function quotedPiece(value: string, at: number): string {
  const start = at > 10 ? at - 10 : 0;
  const end = at + 20;
  return `${start > 0 ? '...' : ''}${value.slice(start, end)}${end < value.length ? '...' : ''}`;
}
