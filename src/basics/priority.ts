import fs from 'node:fs';
import path from 'node:path';

/**
 * The command prefix that starts a process at the lowest priority the machine has, for work that must
 * never take CPU from the clients' (shadow traffic's copier; the benchmark's stand-in legacy host). On
 * Linux, SCHED_IDLE with util-linux's chrt: every thread of the process, its garbage collector's
 * included, runs only on CPU no ordinary thread wants and gives way the moment one wakes (Node has no
 * call for a scheduling policy). Without chrt, nice 19; elsewhere than Linux, nothing.
 */
export function lowestPriority(): string[] {
  if (process.platform !== 'linux') return [];
  const onPath = (name: string) => (process.env.PATH ?? '').split(':').some((dir) => dir !== '' && fs.existsSync(path.join(dir, name)));
  if (onPath('chrt')) return ['chrt', '--idle', '0'];
  return onPath('nice') ? ['nice', '-n', '19'] : [];
}
