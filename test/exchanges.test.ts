import { createTestApp, type TestApp } from './helpers/app';
import { EXCHANGES, expectRecordedAnswer, HOST, sendExchange } from './helpers/exchanges';

/**
 * Every exchange recorded from the legacy host, replayed against the app (test/helpers/exchanges.ts
 * says how each is compared; test/express-mount.test.ts replays them through an Express mount).
 */

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

test('the fixtures are all here', () => {
  expect(EXCHANGES.length).toBeGreaterThanOrEqual(40);
});

describe.each(EXCHANGES.map((x) => [x.id, x] as const))('%s', (_id, x) => {
  test('matches the legacy answer', async () => {
    expectRecordedAnswer(await sendExchange(t.app, x), x, `http://${HOST}`);
  });
});
