import type { StatsFs } from 'node:fs';

/**
 * The bytes this process may still write on a file system (fs.statfs): root may use the blocks the
 * file system reserves for root, other users may not.
 */
export const freeBytes = (st: StatsFs): number => (process.getuid?.() === 0 ? st.bfree : st.bavail) * st.bsize;
