import { authCodeFrom } from './nginx';
import type { Service } from './service';
import { type FakeGateway, settle, until } from './sms-gateway';

/** A caller over its per-address allowance, one within it, and one exempt from it. */
const LIMITED = '127.0.0.2';
const WITHIN = '127.0.0.3';
const EXEMPT = '127.0.0.4';

/**
 * The SMS settings of a service behind an nginx recipe in these tests, all explicit (whatever the
 * defaults): real sends to the fake provider, a per-address limit of 2 an hour, EXEMPT exempt from it,
 * and every other limit far off.
 */
export const smsEnv = (gatewayUrl: string): Record<string, string> => ({
  SMS_GATEWAY: 'http',
  SMS_HTTP_URL: `${gatewayUrl}/send`,
  SMS_HTTP_TIMEOUT_MS: '2000',
  SMS_LEASE_MS: '10000',
  SMS_RETRY_BASE_MS: '20',
  SMS_POLL_MS: '50',
  SMS_DEFAULT_REGION: 'IQ',
  SMS_ALLOWED_COUNTRIES: 'IQ',
  SMS_LIMIT_PER_ADDRESS: '2',
  SMS_LIMIT_PER_PHONE: '5',
  SMS_LIMIT_GLOBAL_PER_MINUTE: '1000',
  SMS_LIMIT_EXEMPT: EXEMPT,
});

const phone = (i: number) => `+96477013${String(i).padStart(5, '0')}`;

export interface Recipe {
  port: number;
  pathPrefix: string;
  gateway: FakeGateway;
  /** The service instances behind nginx: their request log lines show the address each saw. */
  services: Service[];
}

/**
 * AuthCode through nginx from three client source addresses, each code to a phone of its own (no
 * other limit bites): LIMITED sends 3 and gets 2 through, WITHIN sends 2 and gets both, EXEMPT sends
 * 3 and gets all. Without the client's address every caller is nginx: WITHIN would get nothing.
 * Returns the answers' X-Upstream headers (the round-robin recipe names the instance).
 */
export async function countedApart({ port, pathPrefix, gateway, services }: Recipe): Promise<Map<string, string[]>> {
  const plan: [from: string, count: number][] = [
    [LIMITED, 3],
    [WITHIN, 2],
    [EXEMPT, 3],
  ];
  const expected: string[] = [];
  const upstreams = new Map<string, string[]>();
  const ids = new Set<string>();
  let n = 0;
  for (const [from, count] of plan) {
    for (let i = 0; i < count; i += 1) {
      n += 1;
      const answer = await authCodeFrom(from, port, pathPrefix, String(1000 + n), phone(n));
      expect([answer.status, answer.body]).toEqual([200, '']);
      // nginx's $request_id (32 hex digits), kept by the service and returned: one id in both logs.
      expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f]{32}$/);
      ids.add(String(answer.headers['x-request-id']));
      upstreams.set(from, [...(upstreams.get(from) ?? []), String(answer.headers['x-upstream'])]);
      if (from !== LIMITED || i < 2) expected.push(phone(n));
    }
  }
  const sentTo = () => gateway.requests.map((r) => (JSON.parse(r.body) as { to: string }).to).sort();
  await until(`${expected.length} messages reach the provider`, () => gateway.requests.length >= expected.length, 15000);
  // A message sent late would show here: nothing more arrives.
  await settle(500);
  expect(sentTo()).toEqual(expected.sort());
  // Each instance saw every caller by its own address, never as nginx.
  const seen = services
    .flatMap((s) => s.lines)
    .filter((l) => l.msg === 'request' && ids.has(String(l.reqId)))
    .map((l) => l.client);
  expect(seen.sort()).toEqual([...Array(3).fill(LIMITED), ...Array(2).fill(WITHIN), ...Array(3).fill(EXEMPT)]);
  return upstreams;
}
