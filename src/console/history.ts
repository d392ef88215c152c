import type { Sample } from '../basics/sample';

/**
 * The counters the console charts, each kept by the labels it shows only (the endpoint follows from
 * the operation, the latency by bucket over all operations): what a minute holds stays a few dozen
 * numbers whatever the traffic.
 */
const TRACKED: Readonly<Record<string, readonly string[]>> = {
  asmx_requests_total: ['operation', 'binding', 'status'],
  asmx_faults_total: ['operation', 'binding'],
  asmx_request_duration_seconds_bucket: ['le'],
  asmx_shadow_exchanges_total: ['operation', 'outcome'],
  asmx_sms_requests_accepted_total: [],
  asmx_sms_requests_refused_total: ['reason'],
  asmx_sms_sent_total: [],
  asmx_sms_retries_total: [],
  asmx_sms_failed_total: [],
  asmx_sms_expired_total: [],
};

/** The registry names of the metrics tracked (a histogram's buckets come with the histogram). */
export const TRACKED_METRICS: readonly string[] = Object.keys(TRACKED).map((name) => name.replace(/_bucket$/, ''));

/** A day of minutes: the longest view. */
export const KEPT_MINUTES = 24 * 60;

interface Series {
  name: string;
  labels: Record<string, string>;
}

interface Minute {
  /** Minutes since the epoch. */
  at: number;
  /** What each series (by key) grew by in this minute. */
  grew: Map<string, number>;
}

export type Filter = (labels: Record<string, string>) => boolean;
/** What series are summed into: one label's value, or any name made from the labels. */
export type GroupBy = string | ((labels: Record<string, string>) => string);
const all: Filter = () => true;

/**
 * Per-minute increases of the tracked counters over the last day, in memory (bounded: at most
 * KEPT_MINUTES minutes of a few dozen numbers). Fed with whole scrapes of /metrics: what each
 * counter grew by since the last scrape goes to the minute of this one. A sum that went down (a
 * cluster worker replaced, its counts gone with it) is taken as the new starting point, so a
 * restart never shows as negative traffic; the replaced worker's last counts since the previous
 * scrape are lost.
 */
export class History {
  private readonly minutes: Minute[] = [];
  private readonly last = new Map<string, number>();
  private readonly series = new Map<string, Series>();
  private started = false;

  record(samples: readonly Sample[], now: number): void {
    const sums = new Map<string, number>();
    for (const s of samples) {
      const kept = TRACKED[s.name];
      if (kept === undefined) continue;
      const labels: Record<string, string> = {};
      for (const k of kept) labels[k] = s.labels[k] ?? '';
      const key = `${s.name}${JSON.stringify(labels)}`;
      if (!this.series.has(key)) this.series.set(key, { name: s.name, labels });
      sums.set(key, (sums.get(key) ?? 0) + s.value);
    }
    const minute = this.minute(Math.floor(now / 60_000));
    for (const [key, value] of sums) {
      // The first scrape is the starting point (counts from before it are not this minute's); a
      // series that appears later (prom-client shows a label set once counted) started from 0.
      const before = this.last.get(key) ?? (this.started ? 0 : value);
      this.last.set(key, value);
      if (value > before) minute.grew.set(key, (minute.grew.get(key) ?? 0) + value - before);
    }
    this.started = true;
  }

  private minute(at: number): Minute {
    const newest = this.minutes[this.minutes.length - 1];
    if (newest !== undefined && newest.at === at) return newest;
    const m = { at, grew: new Map<string, number>() };
    this.minutes.push(m);
    while (this.minutes.length > 0 && this.minutes[0].at <= at - KEPT_MINUTES) this.minutes.shift();
    return m;
  }

  /**
   * The increase of `name` in each of `count` buckets of `step` minutes ending with the minute of
   * `now`, oldest first, split by the value of `by` (or one series '' without it).
   */
  buckets(name: string, now: number, count: number, step: number, by?: GroupBy, filter: Filter = all): Map<string, number[]> {
    const end = Math.floor(now / 60_000);
    const first = end - count * step + 1;
    const out = new Map<string, number[]>();
    for (const m of this.minutes) {
      if (m.at < first || m.at > end) continue;
      const slot = Math.floor((m.at - first) / step);
      for (const [key, grew] of m.grew) {
        const s = this.series.get(key)!;
        if (s.name !== name || !filter(s.labels)) continue;
        const group = by === undefined ? '' : typeof by === 'string' ? s.labels[by] : by(s.labels);
        let row = out.get(group);
        if (row === undefined) out.set(group, (row = new Array<number>(count).fill(0)));
        row[slot] += grew;
      }
    }
    return out;
  }

  /** The increase of `name` over the last `minutes` minutes (the minute of `now` included), by the value of `by`. */
  totals(name: string, now: number, minutes: number, by?: GroupBy, filter: Filter = all): Map<string, number> {
    const out = new Map<string, number>();
    for (const [group, row] of this.buckets(name, now, 1, minutes, by, filter)) out.set(group, row[0]);
    return out;
  }

  sum(name: string, now: number, minutes: number, filter: Filter = all): number {
    return this.totals(name, now, minutes, undefined, filter).get('') ?? 0;
  }

  /**
   * The latency under which a share `q` of the requests in each bucket were answered, read from the
   * histogram's buckets (so "at most this bucket's bound"), or null for a bucket without requests.
   */
  quantiles(q: number, now: number, count: number, step: number): Array<number | null> {
    const byLe = this.buckets('asmx_request_duration_seconds_bucket', now, count, step, 'le');
    const bounds = [...byLe.keys()].map((le) => ({ le, bound: le === '+Inf' ? Infinity : Number(le) })).sort((a, b) => a.bound - b.bound);
    const out: Array<number | null> = [];
    for (let i = 0; i < count; i++) {
      const all = byLe.get('+Inf')?.[i] ?? 0;
      if (all === 0) {
        out.push(null);
        continue;
      }
      const hit = bounds.find(({ le }) => (byLe.get(le)?.[i] ?? 0) >= q * all);
      out.push(hit === undefined ? null : hit.bound);
    }
    return out;
  }
}
