import type { StudentInfo } from '../contract/types';

/** Students kept in read rosters, all schools together, per process: some tens of MB at most. */
export const CACHED_STUDENTS = 100_000;

/**
 * Rosters (a school's students by ShowActive) already read, kept while the database has not changed.
 * A school's roster is the one large answer of the service and changes only with an import, so
 * between imports reading it again from the database is wasted work. The store checks a version
 * that changes whenever the data may have (SQLite: data_version, bumped by another connection's
 * commit, plus its own imports; PostgreSQL: pg-changes.ts) and the cache forgets everything when it moves.
 *
 * Cached rosters are frozen: whoever holds one can rely on it not changing, which lets the answer
 * writers keep the XML rendered for it (bindings/answers.ts).
 */
export class RosterCache {
  private version: number | null = null;
  private readonly rosters = new Map<string, readonly StudentInfo[]>();
  /** Reads under way at the current version: requests for the same roster wait for the one read. */
  private readonly reading = new Map<string, Promise<readonly StudentInfo[]>>();
  private students = 0;

  /** @param maxStudents how many students all cached rosters may hold together (memory bound). */
  constructor(private readonly maxStudents: number) {}

  get(version: number, school: string, showActive: string, read: () => StudentInfo[]): StudentInfo[] {
    this.at(version);
    const key = keyOf(school, showActive);
    return (this.kept(key) ?? this.keep(key, frozen(read()))) as StudentInfo[];
  }

  /**
   * `get` for a store that reads asynchronously. `version()` null: nothing may be kept, the read goes
   * to the database. A roster whose read ends after the version moved is answered (the request came
   * before the change was known) but not kept, and a request after the move never joins a read begun before it.
   */
  async getAsync(
    version: () => number | null,
    school: string,
    showActive: string,
    read: () => Promise<StudentInfo[]>,
  ): Promise<StudentInfo[]> {
    const v = version();
    if (v === null) return read();
    this.at(v);
    const key = keyOf(school, showActive);
    const kept = this.kept(key);
    if (kept !== undefined) return kept as StudentInfo[];
    let pending = this.reading.get(key);
    if (pending === undefined) {
      pending = read().then(frozen);
      const mine = pending;
      this.reading.set(key, mine);
      const done = () => {
        if (this.reading.get(key) === mine) this.reading.delete(key);
      };
      mine.then(done, done);
    }
    const roster = await pending;
    if (version() === v && this.version === v && !this.rosters.has(key)) this.keep(key, roster);
    return roster as StudentInfo[];
  }

  clear(): void {
    this.rosters.clear();
    this.reading.clear();
    this.students = 0;
  }

  private at(version: number): void {
    if (version !== this.version) {
      this.clear();
      this.version = version;
    }
  }

  private kept(key: string): readonly StudentInfo[] | undefined {
    const roster = this.rosters.get(key);
    if (roster !== undefined) {
      // Most recently used last, so that eviction takes the least recently used first.
      this.rosters.delete(key);
      this.rosters.set(key, roster);
    }
    return roster;
  }

  private keep(key: string, roster: readonly StudentInfo[]): readonly StudentInfo[] {
    this.rosters.set(key, roster);
    this.students += roster.length;
    for (const [oldest, r] of this.rosters) {
      if (this.students <= this.maxStudents || oldest === key) break;
      this.rosters.delete(oldest);
      this.students -= r.length;
    }
    return roster;
  }
}

const keyOf = (school: string, showActive: string): string => `${showActive}\u0000${school}`;

const frozen = (rows: StudentInfo[]): readonly StudentInfo[] => Object.freeze(rows.map((s) => Object.freeze(s)));
