import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { request } from './service';

/** Polls /readyz every 100 ms until `accept` holds; its answer. */
export async function readyzUntil(
  adminPort: number,
  accept: (r: { status: number; body: string }) => boolean,
  what: string,
): Promise<{ status: number; body: string }> {
  const seen: string[] = [];
  for (let i = 0; i < 300; i += 1) {
    const r = await request(adminPort, '/readyz');
    if (accept(r)) return r;
    if (seen.at(-1) !== r.body) seen.push(r.body);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`/readyz never said ${what}; it said: ${JSON.stringify(seen)}`);
}

/** The console's verdict line about readiness, or null when it names none. */
export async function consoleNotReady(adminPort: number): Promise<string | null> {
  const page = await request(adminPort, '/console');
  expect(page.status).toBe(200);
  return /Not ready: [^<]*/.exec(page.body)?.[0] ?? null;
}

/** Mounts a tmpfs of `size` over `dir`, keeping the files it held (the store's). Needs root. */
export function tmpfsOver(dir: string, size: string): void {
  const kept = fs.readdirSync(dir).map((f) => [f, fs.readFileSync(path.join(dir, f))] as const);
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0755`, 'tmpfs', dir], { encoding: 'utf8' });
  if (mounted.status !== 0)
    throw new Error(`mount -t tmpfs over ${dir} was refused (${mounted.stderr.trim()}): this test needs root and mount(8)`);
  for (const [f, bytes] of kept) fs.writeFileSync(path.join(dir, f), bytes);
}

/** Writes `file` until the file system refuses another byte (ENOSPC). */
export function fillUp(file: string): void {
  const fd = fs.openSync(file, 'w');
  try {
    for (const size of [1 << 20, 4096, 1]) {
      const chunk = Buffer.alloc(size, 0x5a);
      try {
        for (;;) fs.writeSync(fd, chunk);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
      }
    }
  } finally {
    fs.closeSync(fd);
  }
}
