import { Rng } from '../fuzz/mutate';

/**
 * Where a generated request's choices come from, and how a failing one is made smaller. A request is
 * made from a sequence of whole numbers (each `int(n)`, in order), drawn from a generator seeded by
 * the run's seed and the request's index, so one request is made again from those two alone. Every
 * choice's 0 is its simplest option (the first item of a list, no mutation, the shortest length), so
 * a sequence with fewer, smaller numbers makes a simpler request: shrinking works on the numbers, as
 * Hypothesis does, and the generator needs no shrinker of its own.
 */
export class Draws {
  /** The numbers drawn, in order: what `replay` takes to make the same request again. */
  readonly made: number[] = [];

  constructor(
    private readonly rng: Rng | null,
    private readonly given: readonly number[] = [],
  ) {}

  /** Whole number in [0, n): replayed when given (held under n), else drawn; past the given ones, 0. */
  int(n: number): number {
    const i = this.made.length;
    const v = i < this.given.length ? Math.min(this.given[i], n - 1) : this.rng === null ? 0 : this.rng.int(n);
    this.made.push(v);
    return v;
  }

  /** True `percent` times in 100; a 0 (what shrinking tries first) is false. */
  chance(percent: number): boolean {
    return this.int(100) >= 100 - percent;
  }

  /** One of `items`, the first being the simplest. */
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }

  /** One of `items` by weight, the first being the simplest. */
  weighted<T>(items: ReadonlyArray<readonly [number, T]>): T {
    let v = this.int(items.reduce((s, [w]) => s + w, 0));
    for (const [w, item] of items) {
      if (v < w) return item;
      v -= w;
    }
    return items[items.length - 1][1];
  }

  /** The position of the next draw: tags name the draw that turned a feature on (see generate.ts). */
  get position(): number {
    return this.made.length;
  }
}

/** The generator's seed for request `index` of a run seeded `seed` (a 32-bit mix of the two). */
export function requestSeed(seed: number, index: number): number {
  let h = (Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(index + 1, 0x85ebca77)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d);
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b);
  return (h ^ (h >>> 16)) >>> 0;
}

export const fresh = (seed: number, index: number) => new Draws(new Rng(requestSeed(seed, index)));
export const replay = (numbers: readonly number[]) => new Draws(null, numbers);

/** A sequence without its trailing zeros (they are what a replay draws past its end anyway). */
const trimmed = (s: readonly number[]) => {
  let n = s.length;
  while (n > 0 && s[n - 1] === 0) n--;
  return s.slice(0, n);
};

/** Shortlex: fewer choices first, then smaller ones. */
function simpler(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return a.length < b.length;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] < b[i];
  return false;
}

/**
 * The simplest sequence found that still `fails` (a request made from it shows the same difference),
 * starting from `start`, trying at most `budget` sequences: each number set to 0, halved or lowered
 * by one, then chunks deleted, until nothing simpler fails. `fails` is given the numbers a request
 * actually drew, so that what is kept is always a sequence the generator made.
 */
export async function shrink(
  start: readonly number[],
  fails: (s: readonly number[]) => Promise<readonly number[] | null>,
  budget = 150,
): Promise<{ best: number[]; tried: number }> {
  let best = trimmed(start);
  let tried = 0;
  const attempt = async (candidate: number[]): Promise<boolean> => {
    if (tried >= budget || !simpler(trimmed(candidate), best)) return false;
    tried++;
    const made = await fails(candidate);
    if (made === null || !simpler(trimmed(made), best)) return false;
    best = trimmed(made);
    return true;
  };
  for (let progress = true; progress && tried < budget; ) {
    progress = false;
    // the early draws are the request's structure (binding, operation, lengths): simplest first
    for (let i = 0; i < best.length && tried < budget; i++) {
      for (const lower of [0, Math.floor(best[i] / 2), best[i] - 1]) {
        if (best[i] > lower && lower >= 0 && (await attempt(best.map((v, j) => (j === i ? lower : v))))) {
          progress = true;
          break;
        }
      }
    }
    for (const size of [8, 4, 2, 1]) {
      for (let i = 0; i + size <= best.length && tried < budget; ) {
        if (await attempt([...best.slice(0, i), ...best.slice(i + size)])) progress = true;
        else i++;
      }
    }
  }
  return { best, tried };
}
