import { log } from '../basics/log';
import { npmIsParent, stopWhenNpmExits } from './npm-parent';

/**
 * How long after a stop signal the same signal is taken for npm's forwarded copy of it, when npm is
 * the parent (see npm-parent.ts). npm forwards at once; a second second is margin for a loaded host.
 */
const ECHO_MS = 1000;

export interface StopHandlers {
  /** The graceful stop; called once, for the first signal (or npm gone). */
  stop(reason: string): void;
  /** A second signal from outside: give up at once. */
  exitNow(signal: NodeJS.Signals): void;
  /** Watch the npm that started this process (not in a cluster worker, whose parent is the primary). */
  watchNpm: boolean;
}

/**
 * SIGTERM, SIGINT and SIGHUP for one process: the first starts the graceful stop; a second one cuts it
 * short, except npm's echo of the first (the same signal within ECHO_MS, once, with npm as the parent).
 * SIGHUP is a stop like the others: a closed terminal or a supervisor sends it, and node's default for
 * it is to end the process at once, resetting every request in flight.
 */
export function onStopSignals({ stop, exitNow, watchNpm }: StopHandlers): void {
  const echoes = watchNpm && npmIsParent();
  /** The first stop: a signal, or npm gone (null), which counts as the first signal it never passed on. */
  let first: { signal: NodeJS.Signals | null; at: number } | null = null;
  let echoIgnored = false;
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (first === null) {
        first = { signal, at: Date.now() };
        return stop(signal);
      }
      if (echoes && !echoIgnored && signal === first.signal && Date.now() - first.at < ECHO_MS) {
        echoIgnored = true;
        log.info('signal forwarded by npm: already stopping', { signal });
        return;
      }
      log.warn('second signal: exiting now', { signal });
      exitNow(signal);
    });
  }
  if (watchNpm) {
    stopWhenNpmExits(() => {
      first ??= { signal: null, at: Date.now() };
      stop('npm exited');
    });
  }
}
