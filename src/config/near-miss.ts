import type { Env } from './parse';

/**
 * Environment variables that look like settings but are not: a typo (`SMS_GATEWY`), another case
 * (`port`), a plural for a singular (`PROTOCOL`), or an unknown name under a prefix the settings use
 * (`SMS_SENDER`). Such a variable is otherwise ignored in silence and its setting keeps its default
 * (all protocols on, codes queued and never sent), which nothing else would reveal.
 *
 * The rules are narrow on purpose, so that the other variables of a machine are never taken for
 * settings: a short name must be one edit away (HOME is two from HOST), only whole-name likeness
 * counts (HOSTNAME is not HOST, DB_PORT not PORT), and other tools' namespaces and the variables
 * Kubernetes and Docker links inject (`REDIS_PORT=tcp://...`, `SMS_SERVICE_HOST`) are left alone.
 */

/** Whose variables these are: never ours, whatever they look like. */
const OTHER_TOOLS = /^(NODE_|npm_|LC_|XDG_|SSH_|JEST_|GIT_|KUBERNETES_|DOCKER_|SYSTEMD_|PG[A-Z])/;

/**
 * Kubernetes' service links (and Docker's legacy links, which it copied) for a service or container
 * named like one of our prefixes: `SMS_SERVICE_HOST`, `REDIS_PORT_6379_TCP_ADDR`, and `REDIS_PORT`
 * whose value is `tcp://10.0.0.7:6379`. (Only the shape of the value is looked at; it is never shown.)
 */
function isServiceLink(name: string, value: string): boolean {
  if (/_SERVICE_(HOST|PORT)(_[A-Z0-9_]+)?$/.test(name)) return true;
  if (/_PORT_\d+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?$/.test(name)) return true;
  return /_PORT$/.test(name) && /^(tcp|udp|sctp):\/\//.test(value);
}

/**
 * Edits between two names, a swap of neighbours counting as one (the optimal string alignment
 * distance): `PROT` is one edit from `PORT`. Plain Levenshtein (fastest-levenshtein, leven) counts a
 * swap as two, and allowing two edits to a four-letter name would take HOME for HOST; the function
 * is a dozen lines over names of a few dozen characters, so no dependency is added for it.
 *
 * Past `limit` the count stops: the answer is then only known to be more than `limit` (no row of
 * the table can fall below the smaller of its last row and the one before plus one).
 */
export function editDistance(a: string, b: string, limit = Infinity): number {
  const n = b.length;
  // Three rows of the table: the one being filled, and the two above it (a swap reaches two up).
  let twoUp = new Int32Array(n + 1);
  let up = Int32Array.from({ length: n + 1 }, (_, j) => j);
  let row = new Int32Array(n + 1);
  let upMin = 0;
  for (let i = 1; i <= a.length; i += 1) {
    row[0] = i;
    let rowMin = i;
    for (let j = 1; j <= n; j += 1) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      let best = Math.min(up[j]! + 1, row[j - 1]! + 1, up[j - 1]! + cost);
      if (i > 1 && j > 1 && a.charCodeAt(i - 1) === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === b.charCodeAt(j - 1))
        best = Math.min(best, twoUp[j - 2]! + 1);
      row[j] = best;
      if (best < rowMin) rowMin = best;
    }
    if (rowMin > limit && upMin + 1 > limit) return limit + 1;
    [twoUp, up, row] = [up, row, twoUp];
    upMin = rowMin;
  }
  return up[n]!;
}

/** The most edits a name may be away from a setting: two, for a setting beyond 7 characters. */
const MOST_EDITS = 2;
/** The edits a name may be away from a setting: one for names up to 7 characters, two beyond. */
const allowedEdits = (setting: string) => (setting.length <= 7 ? 1 : MOST_EDITS);

/** A name without its plural ending: SMS_ALLOWED_COUNTRY and SMS_ALLOWED_COUNTRIES meet here. */
const singular = (name: string) => name.replace(/IES$/, 'Y').replace(/S$/, '');

/** The first word of settings that share it (SMS_, ADMIN_, DATABASE_, ...): a family of settings. */
function prefixes(known: readonly string[]): Set<string> {
  const counts = new Map<string, number>();
  for (const name of known) {
    const first = /^[A-Z0-9]+_/.exec(name)?.[0];
    if (first !== undefined) counts.set(first, (counts.get(first) ?? 0) + 1);
  }
  return new Set([...counts].filter(([, n]) => n >= 2).map(([p]) => p));
}

/**
 * The closest of `candidates` to `name` within `most` edits (the first in their order on a tie),
 * with its distance; Infinity edits when none is that close. Every variable of the environment
 * meets every setting here at each start: measured in full, they took 25 to 50 ms of a start's 600.
 * So a candidate whose length alone is too far is not measured, and the others only as far as
 * `most` or the best so far.
 */
function closest(name: string, candidates: readonly string[], most = Infinity): { setting: string; edits: number } {
  let best = { setting: candidates[0]!, edits: Infinity };
  for (const setting of candidates) {
    const bound = Math.min(best.edits, most + 1);
    if (Math.abs(name.length - setting.length) >= bound) continue;
    const edits = editDistance(name, setting, bound);
    if (edits < best.edits && edits <= most) best = { setting, edits };
  }
  return best;
}

/** The setting `name` was probably meant to be, or null when it does not look like one of `known`. */
export function meantSetting(name: string, known: readonly string[]): string | null {
  if (known.includes(name) || OTHER_TOOLS.test(name)) return null;
  const upper = name.toUpperCase();
  const sameCase = known.find((k) => k === upper);
  if (sameCase !== undefined) return sameCase;
  const plural = known.find((k) => singular(k) === singular(upper));
  if (plural !== undefined) return plural;
  const near = closest(upper, known, MOST_EDITS);
  if (near.edits <= allowedEdits(near.setting)) return near.setting;
  const prefix = [...prefixes(known)].find((p) => name.startsWith(p));
  if (prefix !== undefined)
    return closest(
      name,
      known.filter((k) => k.startsWith(prefix)),
    ).setting;
  return null;
}

/** One line for each variable of `env` that looks like one of `known` without being one. */
export function nearMisses(env: Env, known: readonly string[]): string[] {
  const lines: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || isServiceLink(name, value)) continue;
    const meant = meantSetting(name, known);
    if (meant !== null) lines.push(`${name} is not a setting and is ignored; did you mean ${meant}?`);
  }
  return lines;
}
