import fs from 'node:fs';

/**
 * Under `npm start` the service runs as npm's child, or its grandchild through `sh -c` (npm runs
 * scripts with the system shell; dash forks, bash execs). Two consequences, both handled here:
 *
 * - SIGTERM to npm (what a supervisor sends) makes npm pass it to its own child and exit. With a
 *   shell in between, the shell dies and the service is left serving, orphaned and never signalled.
 *   So the service watches that npm process and stops gracefully, once, when it is gone.
 * - With npm as the direct parent, a signal sent to the whole process group (the terminal's Ctrl-C,
 *   systemd's default KillMode=control-group) reaches the service twice: from the sender, and
 *   forwarded by npm a moment later. signals.ts ignores that echo.
 *
 * Linux only (it reads /proc); elsewhere, and under any supervisor, run `node dist/src/main.js` itself.
 */
const POLL_MS = 500;

/** npm's pid when npm started this process, found among its nearest ancestors; else null. */
export function npmAncestor(): number | null {
  if (process.env.npm_lifecycle_event === undefined || process.platform !== 'linux') return null;
  let pid = process.ppid;
  for (let depth = 0; depth < 3 && pid > 1; depth += 1) {
    try {
      // npm retitles itself (`npm start`); run as `node .../npm-cli.js` before it has.
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (/^(\S*\/)?npm( |$)/.test(cmdline[0] ?? '') || cmdline.some((arg) => arg.endsWith('/npm-cli.js'))) return pid;
      // The parent's pid is the field after the parenthesised command name.
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      return null;
    }
  }
  return null;
}

/** True when npm is this process's parent itself, so that npm forwards group signals to it. */
export function npmIsParent(): boolean {
  const npm = npmAncestor();
  return npm !== null && npm === process.ppid;
}

/**
 * Calls `stop` once, when the npm that started this process has exited (nothing when npm did not).
 * The watch ends with that call: a watcher that kept firing would stop the service again and again.
 */
export function stopWhenNpmExits(stop: () => void): void {
  const npm = npmAncestor();
  if (npm === null) return;
  const timer = setInterval(() => {
    try {
      process.kill(npm, 0);
    } catch {
      clearInterval(timer);
      stop();
    }
  }, POLL_MS).unref();
}
