import { randomBytes } from 'node:crypto';
import { describeNginx, type Nginx, recipeConf, runNginx } from './helpers/nginx';
import { freePort, request, type Service, startService } from './helpers/service';
import { FakeGateway } from './helpers/sms-gateway';
import { countedApart, smsEnv } from './helpers/two-addresses';

/**
 * deploy/nginx/round-robin.conf as shipped (only its ports substituted, as `npm run try-nginx` does,
 * and `user root` when the test runs as root): two service instances on one database behind nginx, with the settings the
 * file names (TRUST_PROXY=true and one REDIS_URL). Callers are counted by their own address,
 * once across both instances. jest.config.js sets TEST_REDIS_URL when Redis answers, and says
 * before the run that this test is skipped when it does not (or fails with REQUIRE_REDIS=1).
 */
const REDIS_URL = process.env.TEST_REDIS_URL ?? '';
const describeRoundRobin = REDIS_URL === '' ? describe.skip : describeNginx;

describeRoundRobin('nginx round-robin over two instances (deploy/nginx/round-robin.conf)', () => {
  const services: Service[] = [];
  let nginx: Nginx;
  let gateway: FakeGateway;
  let port: number;

  beforeAll(async () => {
    gateway = new FakeGateway();
    const env = {
      TRUST_PROXY: 'true',
      ADMIN_PORT: '0',
      REDIS_URL,
      REDIS_KEY_PREFIX: `rr:${randomBytes(6).toString('hex')}:`,
      ...smsEnv(await gateway.listen()),
    };
    const first = await startService({ env });
    services.push(first);
    // The second instance on the first one's database, as the recipe's two instances share one.
    services.push(await startService({ env: { ...env, SQLITE_PATH: first.dbPath } }));
    port = await freePort();
    nginx = await runNginx(
      recipeConf(
        'round-robin',
        `127.0.0.1:${port}`,
        services.map((s) => `127.0.0.1:${s.port}`),
      ),
      port,
    );
  });

  afterAll(async () => {
    await nginx?.stop();
    for (const s of services) s.kill();
    await gateway?.close();
  });

  test('both instances answer', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 4; i += 1) {
      const r = await request(port, '/PushNotificationMobile.asmx/GetTokenDevice?id=dev-1001');
      expect([r.status, r.body.includes('fcm:APA91bH-token-1001')]).toEqual([200, true]);
      seen.add(String(r.headers['x-upstream']));
    }
    expect(seen.size).toBe(2);
  });

  test('AuthCode from two client source addresses: the per-address SMS limit counts them apart, once across both instances', async () => {
    const upstreams = await countedApart({ port, pathPrefix: '', gateway, services });
    // The limited caller's three codes went to both instances: the shared counters still let only two through.
    expect(new Set(upstreams.get('127.0.0.2')).size).toBe(2);
  });
});
