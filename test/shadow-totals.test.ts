import { loadConfig } from '../src/config';
import { openStore } from '../src/store/open';
import type { ShadowTotals } from '../src/store/store';
import { legacyHost, until } from './helpers/legacy-host';
import { TEST_STORE, testDatabase, type TestDatabase } from './helpers/postgres';
import { request, type Service, servicesPerTest, TOKEN_PATH } from './helpers/service';

/**
 * The verdict's totals are exact across restarts (issue 31, point 4): each comparison is counted once,
 * where the service settles the copier's results, and added to the store (shadow_totals) with that
 * batch, so a run shorter than the console's 15-second sampler, stopped gracefully, keeps every
 * comparison; a SIGKILL loses only what the copier had not yet reported (docs/shadow.md); "since" is
 * the first comparison's time. On the SQLite file, or one PostgreSQL schema in jest's postgres project.
 */

const service = servicesPerTest();
let db: TestDatabase | null = null;

beforeEach(async () => {
  db = TEST_STORE === 'postgres' ? await testDatabase('t31') : null;
});
afterEach(async () => {
  await db?.drop();
});

/** The same store for every start of a test: the first start's SQLite file, or the test's schema. */
function storeEnv(first: Service | null): Record<string, string> {
  if (db !== null) return { DATABASE_URL: db.url };
  return first === null ? {} : { SQLITE_PATH: first.dbPath };
}

/** The totals as the store holds them now, read on a connection of the test's own. */
async function totalsIn(env: Record<string, string>): Promise<ShadowTotals> {
  const store = await openStore(loadConfig(env));
  try {
    return await store.shadowTotals();
  } finally {
    await store.close();
  }
}

/** What the console's verdict says: "N compared" and since when. */
async function consoleTotals(s: Service): Promise<{ compared: number; since: string | null }> {
  const page = (await request(s.adminPort, '/console')).body;
  const line = /<p id="shadow-totals">([\d,]+) compared.*?\((since ([^;]+)|none compared yet);/s.exec(page);
  expect(line).not.toBeNull();
  return { compared: Number(line![1]!.replace(/,/g, '')), since: line![3] ?? null };
}

async function copied(s: Service, n: number): Promise<void> {
  for (let i = 0; i < n; i += 1) expect((await request(s.port, TOKEN_PATH)).status).toBe(200);
}

async function stop(s: Service): Promise<void> {
  s.proc.kill('SIGTERM');
  expect(await s.exited).toEqual({ code: 0, signal: null });
}

const linux = process.platform === 'linux' ? describe : describe.skip;
const linuxTest = process.platform === 'linux' ? test : test.skip;

linux.each([
  ['one process', {}],
  ['WORKERS=2', { WORKERS: '2' }],
])('%s', (_name, workers: Record<string, string>) => {
  test('two runs far shorter than the sampler, each stopped gracefully: a restart shows exactly every comparison, since the first one', async () => {
    const host = await legacyHost();
    try {
      const env = (first: Service | null) => ({ SHADOW_URL: host.url, ...workers, ...storeEnv(first) });
      const first = await service({ env: env(null) });
      await copied(first, 5);
      // Once the first comparison is written, and with copies perhaps still in flight: they settle at the stop.
      await until(async () => (await totalsIn(storeEnv(first))).compared > 0);
      const seen = Date.now();
      await until(() => host.answered() === 5);
      await stop(first);

      const second = await service({ env: env(first) });
      const shown = await consoleTotals(second);
      expect(shown.compared).toBe(5);
      // The first comparison settled after the legacy host's first answer, before the store showed it.
      const since = Date.parse(shown.since!);
      expect(since).toBeGreaterThanOrEqual(host.answeredAt[0]!);
      expect(since).toBeLessThanOrEqual(seen);

      await copied(second, 3);
      await until(() => host.answered() === 8);
      await stop(second);
      const stored = await totalsIn(storeEnv(first));
      // Every answer differs from this service's (the stand-in answers a fixed text): all real.
      expect(stored).toEqual({ since: shown.since, compared: 8, real: 8, noise: 0 });
    } finally {
      host.close();
    }
  }, 60_000);
});

linuxTest(
  'SIGKILL: the comparisons the store already shows stay, each once; the copies in flight at the kill are all it loses',
  async () => {
    let release = (): void => undefined;
    let holding = false;
    const held = new Promise<void>((r) => (release = r));
    const host = await legacyHost(() => (holding ? held : Promise.resolve()));
    try {
      const first = await service({ env: { SHADOW_URL: host.url, ...storeEnv(null) } });
      const where = storeEnv(first);
      await copied(first, 4);
      // Reported by the copier and written: durable from here.
      await until(async () => (await totalsIn(where)).compared === 4);
      holding = true;
      await copied(first, 2);
      await until(() => host.received() === 6);
      first.kill();
      await first.exited;
      release();

      const second = await service({ env: { SHADOW_URL: host.url, ...storeEnv(first) } });
      expect((await consoleTotals(second)).compared).toBe(4);
      expect(await totalsIn(where)).toMatchObject({ compared: 4, real: 4, noise: 0 });
    } finally {
      release();
      host.close();
    }
  },
  60_000,
);
