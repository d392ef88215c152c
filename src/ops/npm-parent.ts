import fs from 'node:fs';

/**
 * Under `npm start`, SIGTERM to npm (what a supervisor sends) ends npm without passing the signal on,
 * which would leave this process serving, orphaned. So when npm started it, the service watches that
 * npm process and stops gracefully once it is gone. Linux only (it reads /proc); elsewhere, and for
 * any supervisor, run `node dist/src/main.js` itself.
 */
export function stopWhenNpmExits(stop: () => void): void {
  if (process.env.npm_lifecycle_event === undefined || process.platform !== 'linux') return;
  const npm = npmAncestor();
  if (npm === null) return;
  setInterval(() => {
    try {
      process.kill(npm, 0);
    } catch {
      stop();
    }
  }, 500).unref();
}

/** npm, found among the nearest ancestors (npm runs scripts through `sh -c`). */
function npmAncestor(): number | null {
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
