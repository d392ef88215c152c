import { log } from '../basics/log';
import type { Config } from '../config';
import { smsReadiness } from '../sms/summary';
import { NO_TOTALS, type ShadowTotals, type Store } from '../store/store';
import { latestDifferences } from './differences';
import { History, TRACKED_METRICS } from './history';
import { renderPage } from './page';
import type { Sample } from '../basics/sample';
import { STYLE } from './style';
import type { ConsoleView } from './view';

/**
 * The cut-over console: one page on the admin listener that answers an operator's three questions
 * (does the new service answer as the old one did, do parents get their codes, is it healthy) from
 * what the service already keeps: its metrics (as /metrics serves them, so summed over the workers),
 * the outbox, and the shadow differences log. docs/console.md says what each part shows.
 */
export interface ConsoleSources {
  config: Config;
  /**
   * The samples of the metrics named: this process's, or each worker's, all together (the console
   * sums by labels, so they add up as /metrics sums them).
   */
  metrics(names: readonly string[]): Promise<Sample[]>;
  readiness(): Promise<{ ready: boolean; reason?: string }>;
  /** The store, for the outbox's state (pending and their age, the last failures). */
  store: Store;
}

export interface ConsoleAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface Console {
  /** The answer for a path of the admin listener, or null when the path is not the console's. */
  answer(path: string): Promise<ConsoleAnswer> | null;
  close(): void;
}

/** The metrics the page shows (registry names: a histogram by its own name). */
const READ = [
  ...TRACKED_METRICS,
  'asmx_sms_limiter_fallback',
  'asmx_shadow_held_bytes',
  'asmx_shadow_log_lines_total',
  'asmx_shadow_log_bytes',
];

/** How often the counters are read into the per-minute history, with or without anyone looking. */
const SAMPLE_MS = 15_000;
/** Latest differences shown, and failures listed. */
const LATEST = 5;

/**
 * The page's security headers: nothing runs (no script at all), nothing is loaded but its own
 * style sheet, and no other site may frame it. Every value from a request or the store in the page
 * is escaped (basics/escape.ts); this is the second line.
 */
const PAGE_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
};

export function createConsole(sources: ConsoleSources): Console {
  const history = new History();
  const shadow = sources.config.shadow;

  // One read at a time, recorded in the order asked: a page view and the timer's read overlapping
  // must not record an older scrape after a newer one (it would look like a counter going down).
  let reading: Promise<unknown> = Promise.resolve();
  const sample = (): Promise<Sample[]> => {
    const next = reading.then(async () => {
      const samples = await sources.metrics(READ);
      const now = Date.now();
      history.record(samples, now);
      return samples;
    });
    reading = next.catch(() => undefined);
    return next;
  };
  const tick = () => void sample().catch((error: unknown) => log.warn('console: metrics not read; the next read fills the gap', { error }));
  tick();
  const timer = setInterval(tick, SAMPLE_MS).unref();

  const view = async (): Promise<ConsoleView> => {
    const [samples, ready, outbox, totals] = await Promise.all([
      sample(),
      sources.readiness(),
      readOutbox(sources.store),
      shadow === null ? null : readTotals(sources.store),
    ]);
    return {
      now: Date.now(),
      config: sources.config,
      ready,
      samples,
      history,
      sms: { notSending: smsReadiness(sources.config.sms), ...outbox },
      shadow: shadow === null || totals === null ? null : { ...totals, latest: latestDifferences(shadow.log, LATEST) },
    };
  };

  return {
    answer(p) {
      if (p === '/console')
        return view().then((v) => ({
          status: 200,
          headers: { 'Content-Type': 'text/html; charset=utf-8', ...PAGE_HEADERS },
          body: renderPage(v),
        }));
      if (p === '/console.css')
        return Promise.resolve({ status: 200, headers: { 'Content-Type': 'text/css; charset=utf-8', ...PAGE_HEADERS }, body: STYLE });
      // Browsers ask for it: an empty answer rather than a 404 in the operator's console.
      if (p === '/favicon.ico') return Promise.resolve({ status: 204, headers: { 'Cache-Control': 'max-age=86400' }, body: '' });
      if (p === '/')
        return Promise.resolve({
          status: 302,
          headers: { Location: '/console', 'Content-Type': 'text/plain; charset=utf-8' },
          body: 'see /console\n',
        });
      return null;
    },
    close() {
      clearInterval(timer);
    },
  };
}

/** The verdict's totals, written by each serving process as its comparisons settle (shadow/mirror.ts). */
async function readTotals(store: Store): Promise<{ totals: ShadowTotals; totalsError: string | null }> {
  try {
    return { totals: await store.shadowTotals(), totalsError: null };
  } catch (e) {
    return { totals: NO_TOTALS, totalsError: (e as Error).message };
  }
}

async function readOutbox(store: Store): Promise<Omit<ConsoleView['sms'], 'notSending'>> {
  try {
    const [counts, oldestPending, failures] = await Promise.all([
      store.outbox.counts(),
      store.outbox.oldestPending(),
      store.outbox.list(true, LATEST),
    ]);
    return { counts, oldestPending, failures, storeError: null };
  } catch (e) {
    return { counts: null, oldestPending: null, failures: [], storeError: (e as Error).message };
  }
}
