import type { StudentInfo } from '../contract/types';

/**
 * Rosters (a school's students by ShowActive) already read, kept while the database has not changed.
 * A school's roster is the one large answer of the service and changes only with an import, so
 * between imports reading it again from the database is wasted work. The store checks a version
 * that changes whenever the data may have (SQLite's data_version, bumped by another connection's
 * commit, plus its own imports) and the cache forgets everything when it moves.
 *
 * Cached rosters are frozen: whoever holds one can rely on it not changing, which lets the answer
 * writers keep the XML rendered for it (bindings/answers.ts).
 */
export class RosterCache {
  private version: number | null = null;
  private readonly rosters = new Map<string, readonly StudentInfo[]>();
  private students = 0;

  /** @param maxStudents how many students all cached rosters may hold together (memory bound). */
  constructor(private readonly maxStudents: number) {}

  get(version: number, school: string, showActive: string, read: () => StudentInfo[]): StudentInfo[] {
    if (version !== this.version) {
      this.clear();
      this.version = version;
    }
    const key = `${showActive}\u0000${school}`;
    let roster = this.rosters.get(key);
    if (roster !== undefined) {
      // Most recently used last, so that eviction takes the least recently used first.
      this.rosters.delete(key);
    } else {
      roster = Object.freeze(read().map((s) => Object.freeze(s)));
      this.students += roster.length;
    }
    this.rosters.set(key, roster);
    for (const [oldest, r] of this.rosters) {
      if (this.students <= this.maxStudents || oldest === key) break;
      this.rosters.delete(oldest);
      this.students -= r.length;
    }
    return roster as StudentInfo[];
  }

  clear(): void {
    this.rosters.clear();
    this.students = 0;
  }
}
