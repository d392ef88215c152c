import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createTestApp, FIXTURES, type TestApp } from './helpers/app';
import { request, type Service, startService } from './helpers/service';
import { FakeGateway, until } from './helpers/sms-gateway';

/**
 * The cut-over console in a real browser (Debian's chromium, driven by playwright-core): the service
 * as built, shadowing to a legacy stand-in that answers one request otherwise (a forced difference),
 * texting through a local SMS provider. After a few requests and an AuthCode the page shows the
 * traffic, the SMS and the difference side by side, runs no script and breaks no CSP rule, and
 * refreshes itself. jest.config.js finds chromium (TEST_CHROMIUM) and says before the run when this
 * is skipped; REQUIRE_BROWSER=1 (CI) makes its absence a failure. CONSOLE_SCREENSHOT=docs/console.png
 * writes the screenshot the docs show. It runs on SQLite only (not in jest.config.js's PostgreSQL half):
 * what it tests is the page, and the store behind it is tested by the behaviour suites.
 */
const CHROMIUM = process.env.TEST_CHROMIUM || undefined;
const describeBrowser = CHROMIUM !== undefined || process.env.REQUIRE_BROWSER === '1' ? describe : describe.skip;

jest.setTimeout(60_000);

/** The legacy stand-in: this service over the fixture data with one device token changed. */
async function legacyStandIn(): Promise<{ base: string; t: TestApp; server: http.Server }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'console-legacy-'));
  const read = (name: string) => fs.readFileSync(path.join(FIXTURES, 'data', name), 'utf8');
  fs.writeFileSync(path.join(dir, 'devices.csv'), read('devices.csv').replace('fcm:APA91bH-token-1001', 'fcm:legacy-1001'));
  fs.writeFileSync(path.join(dir, 'students.csv'), read('students.csv'));
  const t = await createTestApp({ LOG_LEVEL: 'silent' }, dir);
  const server = http.createServer(t.listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, t, server };
}

describeBrowser('the console in chromium', () => {
  let legacy: Awaited<ReturnType<typeof legacyStandIn>>;
  const gateway = new FakeGateway();
  let service: Service;
  let browser: Browser;
  let page: Page;
  /** What the browser reported: script errors, CSP violations, failed loads. */
  const complaints: string[] = [];

  beforeAll(async () => {
    expect(CHROMIUM).toBeDefined();
    legacy = await legacyStandIn();
    const gatewayUrl = await gateway.listen();
    service = await startService({
      env: { SHADOW_URL: `${legacy.base}/`, SMS_GATEWAY: 'http', SMS_HTTP_URL: `${gatewayUrl}/send`, SMS_DEFAULT_REGION: 'IQ' },
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1240, height: 900 } });
    page.on('console', (m) => void (m.type() === 'error' || m.type() === 'warning' ? complaints.push(m.text()) : undefined));
    page.on('pageerror', (e) => void complaints.push(e.message));
  });

  afterAll(async () => {
    await browser?.close();
    service?.kill();
    await service?.exited;
    await gateway.close();
    await new Promise((resolve) => legacy?.server.close(resolve));
    await legacy?.t.close();
    if (service !== undefined) fs.rmSync(service.dir, { recursive: true, force: true });
  });

  test('shows the traffic, the SMS and a forced difference side by side, within seconds', async () => {
    for (const id of ['dev-1001', 'dev-1002', 'dev-1002'])
      expect((await request(service.port, `/PushNotificationMobile.asmx/GetTokenDevice?id=${id}`)).status).toBe(200);
    expect((await request(service.port, '/AboutUs.asmx/GetAboutUs')).status).toBe(200);
    const auth = await request(service.port, '/AuthCodeSending.asmx/AuthCode', {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'code=4821&phone=%2B9647701234567',
    });
    expect(auth.status).toBe(200);
    await until('the provider has the code', () => gateway.delivered === 1);

    // The copies are compared after the clients' answers: the page is reloaded until it shows the difference.
    const url = `http://127.0.0.1:${service.adminPort}/console`;
    await until(
      'the console shows the difference',
      async () => {
        await page.goto(url);
        return (
          (await page.locator('.difference').count()) > 0 && (await page.locator('#shadow-totals').innerText()).startsWith('4 compared')
        );
      },
      15_000,
    );

    const traffic = await page.locator('#traffic-table').innerText();
    expect(traffic).toMatch(/GetTokenDevice\s+httpget\s+3\s+0\s+3\s+0/);
    expect(traffic).toMatch(/AuthCode\s+httppost\s+1\s+0\s+1\s+0/);
    expect(traffic).toMatch(/GetAboutUs\s+httpget\s+1/);

    expect(await page.locator('#sms-health').innerText()).toBe('Gateway: sending by http');
    const sms = await page.locator('#sms-table').innerText();
    expect(sms).toMatch(/Accepted \(queued\)\s+1\s+1\s+1/);
    expect(sms).toMatch(/Sent \(the provider took it\)\s+1\s+1\s+1/);
    expect(await page.locator('#sms-outbox').innerText()).toContain('0 pending; 1 delivered');
    const body = await page.locator('body').innerText();
    expect(body).not.toContain('4821');
    expect(body).not.toContain('9647701234567');

    const d = page.locator('.difference').first();
    expect(await d.innerText()).toContain('GetTokenDevice over httpget');
    expect(await d.locator('pre.legacy').innerText()).toContain('fcm:legacy-1001');
    expect(await d.locator('pre.ours').innerText()).toContain('fcm:APA91bH-token-1001');
    // Side by side: the two answers in one row.
    const [l, o] = [await d.locator('pre.legacy').boundingBox(), await d.locator('pre.ours').boundingBox()];
    expect(l!.x).toBeLessThan(o!.x);
    expect(Math.abs(l!.y - o!.y)).toBeLessThan(5);
    expect(await d.locator('pre.ours mark').innerText()).toContain('fcm:APA91bH-token-1001');

    expect(await page.locator('#verdict').innerText()).toMatch(/^Not yet: 4 requests compared over .*, 1 real difference\./);
    // Beside the verdict, its coverage: every copied request answered was compared (AuthCode is not copied).
    expect(await page.locator('#verdict #verdict-coverage').innerText()).toBe(
      'Coverage: 100.0% of the answered requests compared (4 / 4, last day; at least 99% overall and per operation): GetAboutUs 100.0% (1 / 1), GetTokenDevice 100.0% (3 / 3).',
    );
    expect(await page.locator('#shadow-table').innerText()).toMatch(/GetTokenDevice\s+2\s+1\s+0/);
    expect(await page.locator('svg').count()).toBeGreaterThan(10);
    expect(await page.locator('script').count()).toBe(0);
    expect(complaints).toEqual([]);

    if (process.env.CONSOLE_SCREENSHOT) await page.screenshot({ path: process.env.CONSOLE_SCREENSHOT, fullPage: true });
  });

  test('refreshes itself: a request made while the page is open shows after its next reload', async () => {
    await page.goto(`http://127.0.0.1:${service.adminPort}/console`);
    expect(await page.locator('meta[http-equiv="refresh"]').getAttribute('content')).toBe('5');
    expect((await request(service.port, '/AboutUs.asmx/GetAboutUs')).status).toBe(200);
    // The next reload after the answer (the page reloads itself every 5 s).
    await page.waitForEvent('load', { timeout: 20_000 });
    expect(await page.locator('#traffic-table').innerText()).toMatch(/GetAboutUs\s+httpget\s+2/);
    expect(complaints).toEqual([]);
  });
});
