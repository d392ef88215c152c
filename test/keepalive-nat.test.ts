import http from 'node:http';
import { type Reply, request, type Service, servicesPerTest, TOKEN_PATH } from './helpers/service';
import { until } from './helpers/sms-gateway';

/**
 * Many users behind one address (a school's NAT, a carrier's gateway) are served (issue 38, point 4).
 * Each app user leaves its keep-alive connection idle after a request, as HTTP clients do; idle ones
 * counted like busy ones, 100 of them locked out the 101st user of that address for the keep-alive
 * time (65 s). Now an address at MAX_CONNECTIONS_PER_ADDRESS closes its oldest idle connection to
 * admit a new one, and only an address whose connections are all busy is refused (the slow-header
 * attack of test/connections.test.ts still is).
 */

const service = servicesPerTest();
const SCHOOL = '127.0.0.2';
const USERS = 130;

/** One app user: its own keep-alive connection, from the school's address. */
function user(): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets: 1, localAddress: SCHOOL } as http.AgentOptions);
}

/** GetTokenDevice as `agent`'s user; a reply not come within 10 s is status 0 (none). */
function ask(port: number, agent: http.Agent): Promise<number> {
  return Promise.race([
    request(port, TOKEN_PATH, { agent }).then(
      (r: Reply) => r.status,
      () => -1,
    ),
    new Promise<number>((resolve) => setTimeout(resolve, 10_000, 0)),
  ]);
}

async function metric(s: Service, series: string): Promise<number> {
  const body = (await request(s.adminPort, '/metrics')).body;
  const line = body.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? NaN : Number(line.slice(series.length + 1));
}

const EVICTED = 'asmx_connections_closed_total{reason="evicted"}';
const REFUSED = 'asmx_connections_refused_total{reason="per_address"}';

async function schoolServed(s: Service): Promise<void> {
  const users = Array.from({ length: USERS + 1 }, user);
  try {
    // Each user asks once and keeps its connection, one after another as they open the app.
    const first: number[] = [];
    for (const agent of users.slice(0, USERS)) first.push(await ask(s.port, agent));
    expect(first.filter((status) => status !== 200)).toEqual([]);
    // The next user of the school is served at once: an idle connection gives way again.
    expect(await ask(s.port, users[USERS]!)).toBe(200);
    expect(await metric(s, REFUSED)).toBe(0);
    // Summed over the workers: one idle connection closed for each user past the cap.
    await until('the evictions are counted', async () => (await metric(s, EVICTED)) === USERS + 1 - 100, 5000);
    // Every user asks again: those whose connection was closed open another, and all are answered.
    const again: number[] = [];
    for (const agent of users) again.push(await ask(s.port, agent));
    expect(again.filter((status) => status !== 200)).toEqual([]);
  } finally {
    for (const agent of users) agent.destroy();
  }
}

test(`${USERS} keep-alive users behind one address are all answered, and the next one is served at once`, async () => {
  await schoolServed(await service());
}, 120_000);

test(`WORKERS=2: the primary has a worker close an idle connection of the address; ${USERS} users all answered`, async () => {
  await schoolServed(await service({ env: { WORKERS: '2' } }));
}, 120_000);
