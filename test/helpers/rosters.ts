import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import type { StudentInfo } from '../../src/contract/types';
import { BUILD_DIR } from './service';

/**
 * Two versions of the same schools, for checking that a school's roster switches whole (issue 30,
 * rule 7): every roster (school and ShowActive) differs between them in who is on it and in every
 * name, so a roster read during an import is recognisably all old, all new, or a mix.
 */
export interface TwoVersions {
  schools: string[];
  old: string[];
  new: string[];
  /** What a school's roster for a ShowActive is in each version (ids, names and devices, in order). */
  roster(version: 'old' | 'new', school: string, showActive: string): string;
}

export const SHOW_ACTIVE = ['Y', 'N'] as const;
export const HEADER = 'school_base_url,id_student,fullName,id_device,ShowActive';

/**
 * `schools` schools of `perSchool` students. The new version (meant for --replace) drops the first
 * two ids of each school, adds two past the end, renames everyone and moves every pupil to the other
 * ShowActive: no roster of the new version shares a row with the old one.
 */
export function twoVersions(schools: number, perSchool: number): TwoVersions {
  const names = Array.from({ length: schools }, (_, k) => `http://school-${String(k).padStart(4, '0')}.example`);
  const rows = (version: 'old' | 'new') =>
    names.flatMap((school, k) =>
      Array.from({ length: perSchool }, (_, i) => {
        const id = version === 'old' ? i + 1 : i + 3;
        const active = SHOW_ACTIVE[(id + (version === 'old' ? 0 : 1)) % 2]!;
        return { school, id: String(id), name: `${version} ${k}-${id}`, device: `d${id}`, active };
      }),
    );
  const line = (r: ReturnType<typeof rows>[number]) => `${r.school},${r.id},${r.name},${r.device},${r.active}`;
  const rosters = new Map<string, string>();
  for (const version of ['old', 'new'] as const) {
    const byKey = new Map<string, string[]>();
    // Sorted as the service orders a roster: id_student bytewise.
    for (const r of rows(version).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
      const key = `${version} ${r.school} ${r.active}`;
      byKey.set(key, [...(byKey.get(key) ?? []), `${r.id}|${r.name}|${r.device}`]);
    }
    for (const [key, list] of byKey) rosters.set(key, list.join(';'));
  }
  return {
    schools: names,
    old: rows('old').map(line),
    new: rows('new').map(line),
    roster: (version, school, showActive) => rosters.get(`${version} ${school} ${showActive}`) ?? '',
  };
}

export type SchoolState = 'old' | 'new' | 'mixed';

const signature = (students: readonly StudentInfo[]): string =>
  students.map((s) => `${s.id_student}|${s.fullName}|${s.id_device}`).join(';');

type Read = (school: string, showActive: string) => Promise<readonly StudentInfo[]>;

/**
 * Each roster's state (keyed "school showActive") as `read` answers it: 'old' or 'new' when it is
 * that version's exactly, 'mixed' when it has rows of both (or is neither). What one request sees.
 */
export async function rosterStates(
  data: TwoVersions,
  read: Read,
  schools: readonly string[] = data.schools,
): Promise<Map<string, SchoolState>> {
  const states = new Map<string, SchoolState>();
  for (const school of schools) {
    for (const active of SHOW_ACTIVE) {
      const got = signature(await read(school, active));
      states.set(
        `${school} ${active}`,
        got === data.roster('old', school, active) ? 'old' : got === data.roster('new', school, active) ? 'new' : 'mixed',
      );
    }
  }
  return states;
}

/**
 * Each school's state: 'old' or 'new' when every roster of the school is that version's, else
 * 'mixed'. For a database at rest (after a kill): two rosters read while an import runs may be read
 * either side of the school's switch, so a live reader checks each roster (rosterStates).
 */
export async function schoolStates(
  data: TwoVersions,
  read: Read,
  schools: readonly string[] = data.schools,
): Promise<Map<string, SchoolState>> {
  const rosters = await rosterStates(data, read, schools);
  const states = new Map<string, SchoolState>();
  for (const school of schools) {
    const seen = new Set(SHOW_ACTIVE.map((active) => rosters.get(`${school} ${active}`)!));
    states.set(school, seen.size === 1 ? [...seen][0]! : 'mixed');
  }
  return states;
}

/** How many schools (or rosters) are in each state. */
export function tally(states: Map<string, SchoolState>): Record<SchoolState, number> {
  const counts = { old: 0, new: 0, mixed: 0 };
  for (const s of states.values()) counts[s] += 1;
  return counts;
}

/** The built import command (test/helpers/global-setup.ts builds it), as `npm run import` runs it. */
export function spawnImport(
  args: string[],
  env: Record<string, string>,
): { child: ChildProcess; stderr: () => string; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> } {
  const child = spawn(process.execPath, ['--max-old-space-size=128', path.join(BUILD_DIR, 'scripts', 'import.js'), ...args], {
    env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, stderr: () => stderr, exited };
}
