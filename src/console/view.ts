import type { Config } from '../config';
import type { DifferenceLine } from '../shadow/report';
import type { OutboxRecord, ShadowTotals, SmsStatus } from '../store/store';
import type { History } from './history';
import type { Sample } from '../basics/sample';

/** Everything the page shows, read at one moment. */
export interface ConsoleView {
  now: number;
  config: Config;
  ready: { ready: boolean; reason?: string };
  samples: Sample[];
  history: History;
  sms: {
    /** Why no code reaches a phone (no gateway, or only logged), or undefined when sent. */
    notSending: string | undefined;
    counts: Record<SmsStatus, number> | null;
    oldestPending: string | null;
    failures: OutboxRecord[];
    /** The store could not be read (its error, for the operator). */
    storeError: string | null;
  };
  /** The verdict's totals from the store (totalsError: why they could not be read), and the latest differences. */
  shadow: { totals: ShadowTotals; totalsError?: string | null; latest: DifferenceLine[] } | null;
}
