import { htmlDecode } from '../basics/escape';
import { dangerousAt, quotedPiece } from '../basics/request-validation';

/**
 * How Mono quotes a value refused by request validation (its HttpRequest.ThrowValidationException),
 * which is not .NET's: the value as read, NULs and all, whole up to 18 characters, else its first
 * 15 and `...`. .NET quotes the value without NULs from 10 units before the dangerous place to 20
 * after (basics/request-validation.ts), as ours does. A comparison with a Mono legacy host reads its
 * refusal as agreeing when ours is .NET's quote of a value Mono would have quoted so.
 */

const REFUSAL = /^A potentially dangerous (Request\.\w+) value was detected from the client \(([\s\S]*?)=&quot;([\s\S]*)&quot;\)\.\r\n$/;
const MONO_WHOLE = 18;
const MONO_KEPT = 15;
const CUT = '...';

export function sameRefusalAsMono(legacy: string, ours: string): boolean {
  const l = REFUSAL.exec(legacy);
  const o = REFUSAL.exec(ours);
  if (l === null || o === null || l[1] !== o[1] || l[2] !== o[2]) return false;
  const theirs = htmlDecode(l[3]);
  const mine = htmlDecode(o[3]);
  // Mono writes each half of a surrogate pair as U+FFFD (also a first half left at its cut).
  const mineAsMono = mine.replace(/[\ud800-\udfff]/g, '\ufffd');
  // Mono quoted the value whole: .NET's quote of it is known exactly.
  const value = theirs.replaceAll('\0', '');
  const at = dangerousAt(value);
  if (theirs.length <= MONO_WHOLE && at !== -1 && quotedPiece(value, at) === mineAsMono) return true;
  // Mono cut it: ours must be a quote .NET could give, of a value starting as Mono's does.
  if (theirs.length !== MONO_WHOLE || !theirs.endsWith(CUT)) return false;
  const start = theirs.slice(0, MONO_KEPT).replaceAll('\0', '');
  return isNetQuote(mine) && (mine.startsWith(CUT) || mineAsMono.startsWith(start));
}

/** Whether `piece` can be quotedPiece(value, at) of some value: its length and dangerous place fit the window. */
function isNetQuote(piece: string): boolean {
  const cutBefore = piece.startsWith(CUT);
  const body = cutBefore ? piece.slice(CUT.length) : piece;
  // a value may itself end with `...`: either reading will do
  const readings = body.endsWith(CUT) ? [[body.slice(0, -CUT.length), true] as const, [body, false] as const] : [[body, false] as const];
  return readings.some(([core, cutAfter]) => {
    const at = dangerousAt(core);
    if (at === -1 || (cutBefore ? at !== 10 : at > 10)) return false;
    const full = cutBefore ? 30 : at + 20;
    return cutAfter ? core.length === full : core.length <= full;
  });
}
