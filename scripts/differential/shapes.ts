import type { Draws } from './draws';
import { type Value, value } from './values';

/**
 * The parameters of a call as a client sends them: each of the operation's, or missing, or twice;
 * their names in another case; in another order; with names the operation does not have. The same
 * shape is written as SOAP elements (soap.ts) or as a query string or form (http.ts).
 */

export interface Param {
  name: string;
  value: Value;
  /** The draw that made the value: zeroing it gives the data set's value (tags point at it). */
  at: number;
  /** The draw that made the name: zeroing it gives the operation's own (or the first extra) name. */
  nameAt: number;
}

const EXTRA_NAMES = ['x', 'extra', '__VIEWSTATE', 'id2', 'a b', 'ن', 'op', 'wsdl'];

const recased = (d: Draws, name: string) => d.pick([name.toUpperCase(), name.toLowerCase(), name[0].toUpperCase() + name.slice(1)]);

export function parameters(d: Draws, names: readonly string[], soap: boolean): Param[] {
  const out: Param[] = [];
  const one = (name: string, nameAt: number) => {
    const at = d.position;
    out.push({ name, value: value(d, name, soap), at, nameAt });
  };
  for (const name of names) {
    if (d.chance(8)) continue;
    const nameAt = d.position;
    one(d.chance(4) ? recased(d, name) : name, nameAt);
    if (d.chance(5)) one(name, nameAt);
  }
  if (d.chance(8)) {
    for (let n = 1 + d.int(3); n > 0; n--) {
      const nameAt = d.position;
      one(d.pick(EXTRA_NAMES), nameAt);
    }
  }
  if (d.chance(10)) {
    // a few swaps: another order, reproducible from the draws
    for (let n = 1 + d.int(3); n > 0 && out.length > 1; n--) {
      const i = d.int(out.length);
      const j = d.int(out.length);
      [out[i], out[j]] = [out[j], out[i]];
    }
  }
  return out;
}
