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

export function sameRefusalAsMono(legacy: string, ours: string): boolean {
  const l = REFUSAL.exec(legacy);
  const o = REFUSAL.exec(ours);
  if (l === null || o === null || l[1] !== o[1] || l[2] !== o[2]) return false;
  const theirs = htmlDecode(l[3]);
  const mine = htmlDecode(o[3]);
  // Mono quoted the value whole: .NET's quote of it is known exactly.
  const value = theirs.replaceAll('\0', '');
  const at = dangerousAt(value);
  if (theirs.length <= MONO_WHOLE && at !== -1 && quotedPiece(value, at) === mine) return true;
  // Mono cut it: ours starts where the value starts (a piece cut at both ends starts further in).
  if (theirs.length !== MONO_WHOLE || !theirs.endsWith('...')) return false;
  // a first half of a surrogate pair at the cut was written as U+FFFD
  const start = theirs.slice(0, MONO_KEPT).replaceAll('\0', '').replace(/\ufffd$/, '');
  return mine.startsWith('...') || mine.startsWith(start);
}
