import { groupDigits } from '../basics/digits';
import { log } from '../basics/log';
import { maskText } from '../basics/mask';
import type { ShadowConfig } from '../config';
import type { Answer, Difference } from './compare';
import { EXAMPLES_WINDOW_MS, Examples, kindOf, type Tally } from './examples';
import { openLogFile, type Pen } from './log-file';
import { countLogLine, logPens } from './metrics';

/**
 * The differences log: one JSON line per request whose two answers differ, appended to SHADOW_LOG,
 * for a few of each kind an hour (examples.ts), and a tally line for the rest; on disk within its
 * budget and above its floor (log-file.ts). A line holds the request and both answers, so a
 * difference can be understood without the traffic, but no secret: every text of it is masked by
 * the rule the service's own log uses (basics/mask.ts maskText): AuthCode's code removed wherever
 * a field names it, phones masked in any spelling.
 */
export interface ReportedRequest {
  method: string;
  url: string;
  /** Content-Type and SOAPAction, the headers that choose what a request means. */
  headers: Record<string, string>;
  body: string;
}

export interface DifferenceLine {
  time: string;
  requestId: string;
  mode: string;
  endpoint: string;
  operation: string;
  binding: string;
  request: ReportedRequest;
  legacy: Answer;
  ours: Answer;
  differences: Difference[];
  /** The second legacy site differed from the first the same way (SHADOW_URL_SECONDARY): not the new service's doing. */
  noise?: boolean;
}

/** A body kept in the log: at most this many characters (a line per difference, not a copy of the traffic). */
const KEPT = 64 * 1024;
// The count with its thousands separated: a run of seven digits would read as a phone and be masked.
const kept = (s: string) => (s.length > KEPT ? `${s.slice(0, KEPT)}…(${groupDigits(s.length)} characters)` : s);

const maskHeaders = <T extends Record<string, string | undefined>>(h: T): T =>
  Object.fromEntries(Object.entries(h).map(([k, v]) => [k, v === undefined ? v : maskText(v)])) as T;
const maskAnswer = (a: Answer): Answer => ({
  ...a,
  headers: maskHeaders(a.headers),
  body: maskText(kept(a.body)),
  ...(a.error === undefined ? {} : { error: maskText(a.error) }),
});

export interface Report {
  write(line: DifferenceLine): void;
  close(): Promise<void>;
}

/** A tally line: how many lines of one kind were not written since `since`, and why (examples.ts). */
export interface NotWrittenLine extends Tally {
  time: string;
}

/** Whether a line of the log is a tally rather than a difference. */
export const isTally = (line: object): line is NotWrittenLine => {
  const n = (line as Partial<NotWrittenLine>).notWritten;
  return typeof n === 'object' && n !== null;
};

type LogSettings = Pick<ShadowConfig, 'logMaxBytes' | 'logKeepFree' | 'logExamples'>;

/**
 * The report on `file` (null: counted only), its lines written by `pen` (a cluster worker's goes
 * to its primary: log-relay.ts), else by this process. A difference past its kind's examples is
 * counted before anything of it is masked or serialised: a flood of one kind costs a count each.
 */
export function openReport(file: string | null, settings: LogSettings, pen?: Pen): Report {
  if (file === null) return { write: () => undefined, close: async () => undefined };
  const out = pen ?? openLogFile(file, { maxBytes: settings.logMaxBytes, keepFree: settings.logKeepFree });
  logPens.add(out);
  const examples = new Examples(settings.logExamples);
  let told = false;
  const tallies = (due: Tally[]) =>
    Promise.all(
      due.map((t) =>
        out.append(`${JSON.stringify({ time: new Date().toISOString(), ...maskTally(t) } satisfies NotWrittenLine)}\n`).then((outcome) => {
          if (outcome !== 'written') examples.carry(t);
        }),
      ),
    );
  // The hour's tallies are written at its end even when no difference comes to roll it.
  const timer = setInterval(() => void tallies(examples.roll()), EXAMPLES_WINDOW_MS / 4).unref();
  return {
    write(line) {
      void tallies(examples.roll());
      const kind = kindOf(
        line.operation,
        line.binding,
        line.noise === true,
        line.differences.map((d) => d.kind),
      );
      if (!examples.take(kind)) {
        countLogLine('examples');
        if (!told)
          log.info(
            "shadow differences log: a kind of difference had its SHADOW_LOG_EXAMPLES lines this hour; the rest are counted, and how many written at the hour's end",
            { file, examplesPerHour: settings.logExamples },
          );
        told = true;
        return;
      }
      const masked: DifferenceLine = {
        ...line,
        request: {
          ...line.request,
          url: maskText(line.request.url),
          headers: maskHeaders(line.request.headers),
          body: maskText(kept(line.request.body)),
        },
        legacy: maskAnswer(line.legacy),
        ours: maskAnswer(line.ours),
        differences: line.differences.map((d) => ({ kind: maskText(d.kind), detail: maskText(d.detail) })),
      };
      void out.append(`${JSON.stringify(masked)}\n`).then((outcome) => {
        countLogLine(outcome);
        if (outcome !== 'written') examples.missed(kind, outcome);
      });
    },
    async close() {
      clearInterval(timer);
      await tallies(examples.roll(true));
      await out.close();
      logPens.delete(out);
    },
  };
}

const maskTally = (t: Tally): Tally => ({ ...t, kinds: t.kinds.map(maskText) });
