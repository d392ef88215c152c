import request from 'supertest';
import { smsMetrics } from '../src/sms/metrics';
import { main as outboxCommand } from '../scripts/outbox';
import type { TestDatabase } from './helpers/postgres';
import { envelope, NS, opElement, soap11, soap12 } from './helpers/soap';
import { captureLog, type FakeGateway, settle, until } from './helpers/sms-gateway';
import { authCode, byStatus, PATIENT_PROVIDER, phone, rows, smsServices } from './helpers/sms-service';

/**
 * AuthCode's SMS delivery end to end, against a fake provider (a real HTTP server): the service's
 * app, its intake and dispatcher over the configured store (SQLite here, PostgreSQL in jest's
 * postgres project). Delays are short and configured; conditions are awaited with a bounded poll.
 */

const world = smsServices();
const service = world.service;
let gateway: FakeGateway;
let db: TestDatabase | null;
beforeEach(() => {
  gateway = world.gateway;
  db = world.db;
});

const retries = async () => (await smsMetrics.retries.get()).values[0]?.value ?? 0;
const sentTo = () => gateway.requests.map((r) => JSON.parse(r.body) as { to: string; message: string });

test('a valid request is delivered once, with the right text, and its code is erased', async () => {
  const s = await service();
  const res = await authCode(s.app, '4821', '0770 123 4567');
  expect(res.status).toBe(200);
  expect(res.text).toBe('');
  await until('the message is delivered', async () => (await byStatus(s, 'delivered')) === 1);
  await settle();
  expect(sentTo()).toEqual([{ to: '+9647701234567', message: 'رمز التحقق: 4821' }]);
  expect(gateway.requests[0]!.headers['content-type']).toBe('application/json; charset=utf-8');
  const [row] = await rows(s);
  expect(row).toMatchObject({ phone: '+9647701234567', status: 'delivered', attempts: 1, hasCode: false, lastError: null });
});

test("every binding gives the contract's empty answer, whether the request is sent or refused", async () => {
  const s = await service({ SMS_LIMIT_PER_PHONE: '1' });
  const cases = [
    { code: '1111', phone: '+9647701230001' }, // sent
    { code: '1111', phone: '+9647701230001' }, // a duplicate
    { code: '2222', phone: '+9647701230001' }, // over the per-phone limit
    { code: '3333', phone: '12' }, // not a phone
    { code: 'not a code!', phone: '+9647701230002' },
  ];
  const soap11Answers = new Set<string>();
  const soap12Answers = new Set<string>();
  const httpAnswers = new Set<string>();
  for (const c of cases) {
    const r11 = await soap11(s.app, '/AuthCodeSending.asmx', `"${NS}AuthCode"`, envelope('1.1', opElement('AuthCode', c)));
    const r12 = await soap12(s.app, '/AuthCodeSending.asmx', envelope('1.2', opElement('AuthCode', c)));
    const get = await request(s.app).get('/AuthCodeSending.asmx/AuthCode').query(c);
    const post = await authCode(s.app, c.code, c.phone);
    for (const r of [r11, r12]) expect(r.status).toBe(200);
    for (const r of [get, post]) expect([r.status, r.text, r.headers['content-type']]).toEqual([200, '', undefined]);
    soap11Answers.add(r11.body);
    soap12Answers.add(r12.body);
    httpAnswers.add(`${get.text}|${post.text}`);
  }
  expect([...soap11Answers]).toEqual([expect.stringContaining(`<AuthCodeResponse xmlns="${NS}" />`)]);
  expect([...soap12Answers]).toEqual([expect.stringContaining(`<AuthCodeResponse xmlns="${NS}" />`)]);
  expect(httpAnswers.size).toBe(1);
  await until('the one valid message is delivered', async () => (await byStatus(s, 'delivered')) === 1);
});

test('a bad phone or code sends nothing, and is counted by reason', async () => {
  const s = await service({ SMS_ALLOWED_COUNTRIES: 'IQ' });
  const refusedBefore = async (reason: string) =>
    (await smsMetrics.refused.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0;
  const before = { phone: await refusedBefore('phone'), code: await refusedBefore('code'), country: await refusedBefore('country') };
  const bad: [string, string][] = [
    ['1234', '+964770'], // too short for Iraq
    ['1234', 'call me'],
    ['1234', ''],
    ['1234', `+96477012345${'6'.repeat(60)}`],
    ['1234', '+962791234567'], // Jordan: not an allowed country
    ['1234', '+447911123456'], // the UK: not allowed either
    ['', '+9647701234567'],
    ['1234567890123', '+9647701234567'], // 13 characters
    ['12 34', '+9647701234567'],
    ['12-34', '+9647701234567'],
  ];
  for (const [code, p] of bad) expect([code, p, (await authCode(s.app, code, p)).status]).toEqual([code, p, 200]);
  // Absent parameters over SOAP are nulls.
  await soap11(s.app, '/AuthCodeSending.asmx', `"${NS}AuthCode"`, envelope('1.1', opElement('AuthCode', {})));
  await settle(300);
  expect(gateway.requests).toEqual([]);
  expect(await rows(s)).toEqual([]);
  expect((await refusedBefore('phone')) - before.phone).toBe(4);
  expect((await refusedBefore('country')) - before.country).toBe(2);
  expect((await refusedBefore('code')) - before.code).toBe(5);
});

test('premium-rate numbers are refused: the SMS-pumping target', async () => {
  const s = await service();
  await authCode(s.app, '1234', '+19005550100');
  await settle(200);
  expect(gateway.requests).toEqual([]);
});

test('the gateway answering 500 (then 503 and 429), then recovering, ends in exactly one delivery', async () => {
  const s = await service();
  gateway.script.push(500, 503, 429);
  await authCode(s.app, '5150', '+9647701234567');
  await until('the message is delivered', async () => (await byStatus(s, 'delivered')) === 1);
  await settle();
  expect(gateway.requests).toHaveLength(4);
  expect(gateway.delivered).toBe(1);
  expect((await rows(s))[0]).toMatchObject({ attempts: 4, hasCode: false });
});

test('the gateway timing out, then recovering, ends in exactly one delivery', async () => {
  const s = await service();
  gateway.script.push('hang', 'hang');
  await authCode(s.app, '7070', '+9647701234567');
  await until('the message is delivered', async () => (await byStatus(s, 'delivered')) === 1);
  await settle();
  expect(gateway.requests).toHaveLength(3);
  expect(gateway.delivered).toBe(1);
});

test('after SMS_MAX_ATTEMPTS failures the message is failed with the last error, and an operator can resend it', async () => {
  const s = await service({ SMS_MAX_ATTEMPTS: '3' });
  gateway.script.push(500, 500, 502);
  await authCode(s.app, '3131', '+9647701234567');
  await until('the message has failed', async () => (await byStatus(s, 'failed')) === 1);
  await settle();
  expect(gateway.requests).toHaveLength(3);
  const [failed] = await rows(s);
  expect(failed).toMatchObject({ status: 'failed', attempts: 3, lastError: 'HTTP 502: {"message":"try later"}', hasCode: true });
  expect(await s.store.outbox.retry(failed!.id, new Date(), new Date(0))).toBe(1);
  s.sms.dispatcher.wake();
  await until('the message is delivered', async () => (await byStatus(s, 'delivered')) === 1);
  expect(sentTo().map((m) => m.message)).toEqual(Array(4).fill('رمز التحقق: 3131'));
});

test("a 4xx other than 429 is the provider's final no; with SMS_FAILED_HOLD_MINUTES=0 the code is erased at once", async () => {
  const s = await service({ SMS_FAILED_HOLD_MINUTES: '0' });
  gateway.script.push(400);
  await authCode(s.app, '4004', '+9647701234567');
  await until('the message has failed', async () => (await byStatus(s, 'failed')) === 1);
  await settle();
  expect(gateway.requests).toHaveLength(1);
  const [failed] = await rows(s);
  expect(failed).toMatchObject({ attempts: 1, hasCode: false, lastError: 'HTTP 400: {"message":"try later"}' });
  expect(await s.store.outbox.retry(failed!.id, new Date(), new Date(0))).toBe(0);
});

test('the service killed between storing and sending delivers after restart; a dead claim is taken over when its lease ends', async () => {
  const first = await service({}, false);
  await authCode(first.app, '1001', '+9647701234567');
  await authCode(first.app, '1002', '+9647701234568');
  // The second one was claimed by a process that died mid-send: its lease runs out in 300 ms.
  const now = new Date();
  const [claimed] = await first.store.outbox.claimDue('dead-process', now, new Date(now.getTime() + 300), 1, new Date(0));
  expect(claimed!.code).toBe('1001');
  await first.sms.close();
  await first.store.close();
  expect(gateway.requests).toEqual([]);

  const restarted = await service();
  await until('both are delivered', async () => (await byStatus(restarted, 'delivered')) === 2, 5000);
  await settle();
  expect(
    sentTo()
      .map((m) => m.to)
      .sort(),
  ).toEqual(['+9647701234567', '+9647701234568']);
  expect((await rows(restarted)).find((r) => r.phone === '+9647701234567')!.attempts).toBe(2);
});

test('two processes on one database never send a message twice', async () => {
  gateway.delayMs = 15;
  // What is tested is the claims: no answer may be taken for lost.
  const retriesBefore = await retries();
  const a = await service(PATIENT_PROVIDER, false);
  const b = await service(PATIENT_PROVIDER, false);
  const n = 60;
  for (let i = 0; i < n; i += 1) await (i % 2 === 0 ? a : b).store.outbox.enqueue(String(i), phone(i));
  a.sms.start();
  b.sms.start();
  await until('every message is delivered', async () => (await byStatus(a, 'delivered')) === n, 15000);
  await settle(200);
  const to = sentTo().map((m) => m.to);
  expect(to).toHaveLength(n);
  expect(new Set(to).size).toBe(n);
  // Each message was claimed once: not a retry among them, so not a resend either.
  expect((await retries()) - retriesBefore).toBe(0);
  expect((await rows(a)).map((r) => r.attempts)).toEqual(Array(n).fill(1));
});

test('100 requests for one phone in a minute send 5', async () => {
  const s = await service();
  for (let i = 0; i < 100; i += 1) expect((await authCode(s.app, String(1000 + i), '+9647701234567')).status).toBe(200);
  await until('five are delivered', async () => (await byStatus(s, 'delivered')) === 5);
  await settle(200);
  expect(sentTo().map((m) => m.message)).toEqual(['1000', '1001', '1002', '1003', '1004'].map((c) => `رمز التحقق: ${c}`));
});

test('the same phone and code within two minutes is sent once', async () => {
  const s = await service();
  for (let i = 0; i < 3; i += 1) await authCode(s.app, '2468', '+9647701234567');
  await authCode(s.app, '2468', '07701234567'); // the same number, written nationally
  await authCode(s.app, '1357', '+9647701234567');
  await until('two are delivered', async () => (await byStatus(s, 'delivered')) === 2);
  await settle(200);
  expect(gateway.requests).toHaveLength(2);
});

test('the per-address limit bites on the address the trusted proxy saw', async () => {
  const s = await service({ SMS_LIMIT_PER_ADDRESS: '3', TRUST_PROXY: 'true' });
  // The client may write anything before the proxy's own entry: only the last one counts.
  for (let i = 0; i < 5; i += 1) await authCode(s.app, '1234', phone(i), { 'X-Forwarded-For': `198.51.100.${i}, 203.0.113.7` });
  for (let i = 5; i < 7; i += 1) await authCode(s.app, '1234', phone(i), { 'X-Forwarded-For': '203.0.113.8' });
  await until('five are delivered', async () => (await byStatus(s, 'delivered')) === 5);
  await settle(200);
  expect(sentTo().map((m) => m.to)).toEqual([0, 1, 2, 5, 6].map(phone));
});

test('without TRUST_PROXY the forwarded address is ignored: the limit is per socket address', async () => {
  const s = await service({ SMS_LIMIT_PER_ADDRESS: '2' });
  for (let i = 0; i < 4; i += 1) await authCode(s.app, '1234', phone(i), { 'X-Forwarded-For': `203.0.113.${i}` });
  await until('two are delivered', async () => (await byStatus(s, 'delivered')) === 2);
  await settle(200);
  expect(gateway.requests).toHaveLength(2);
});

test('SOAP requests are limited by their client address too', async () => {
  const s = await service({ SMS_LIMIT_PER_ADDRESS: '2' });
  for (let i = 0; i < 3; i += 1) {
    await soap11(s.app, '/AuthCodeSending.asmx', `"${NS}AuthCode"`, envelope('1.1', opElement('AuthCode', { code: '1', phone: phone(i) })));
    await soap12(s.app, '/AuthCodeSending.asmx', envelope('1.2', opElement('AuthCode', { code: '2', phone: phone(i + 10) })));
  }
  await until('two are delivered', async () => (await byStatus(s, 'delivered')) === 2);
  await settle(200);
  expect(gateway.requests).toHaveLength(2);
});

test('the global ceiling per minute bites', async () => {
  const s = await service({ SMS_LIMIT_GLOBAL_PER_MINUTE: '4', TRUST_PROXY: 'true' });
  for (let i = 0; i < 7; i += 1) await authCode(s.app, '1234', phone(i), { 'X-Forwarded-For': `203.0.113.${i}` });
  await until('four are delivered', async () => (await byStatus(s, 'delivered')) === 4);
  await settle(200);
  expect(sentTo().map((m) => m.to)).toEqual([0, 1, 2, 3].map(phone));
});

test('shutdown stops claiming, finishes the sends in flight and leaves the rest pending for the next start', async () => {
  gateway.delayMs = 200;
  // Answers take 200 ms: a time-out far above that, so that a loaded machine does not turn a send in
  // flight into a time-out and a retry (with the 300 ms of the other tests it could).
  const slow = { SMS_HTTP_TIMEOUT_MS: '5000', SMS_LEASE_MS: '10000' };
  const s = await service(slow, false);
  for (let i = 0; i < 15; i += 1) await s.store.outbox.enqueue(String(i), phone(i));
  s.sms.start();
  await until('sends are in flight', () => gateway.requests.length > 0);
  await s.sms.dispatcher.stop();
  const delivered = await byStatus(s, 'delivered');
  expect(delivered).toBe(gateway.requests.length);
  expect(delivered).toBeGreaterThan(0);
  expect(await byStatus(s, 'pending')).toBe(15 - delivered);
  await settle(300);
  expect(gateway.requests).toHaveLength(delivered);

  const next = await service(slow);
  await until('the rest is delivered', async () => (await byStatus(next, 'delivered')) === 15, 10000);
  expect(new Set(sentTo().map((m) => m.to)).size).toBe(15);
  expect(gateway.requests).toHaveLength(15);
});

test('no log line holds a code or a whole phone number', async () => {
  const captured = captureLog();
  try {
    const s = await service({ SMS_MAX_ATTEMPTS: '2', SMS_LIMIT_PER_PHONE: '2' });
    gateway.script.push(500, 400);
    await authCode(s.app, '864209', '+9647709876543');
    await authCode(s.app, '975310', '+9647709876543');
    await authCode(s.app, '975311', '+9647709876543'); // over the limit
    await authCode(s.app, 'bad code', '+9647709876543');
    await until('both settled', async () => (await byStatus(s, 'delivered')) + (await byStatus(s, 'failed')) === 2);
    await settle();
  } finally {
    captured.restore();
  }
  const lines = captured.lines.map((l) => JSON.stringify(l));
  expect(lines.length).toBeGreaterThan(4);
  for (const line of lines) {
    expect(line).not.toMatch(/864209|975310|975311|bad code|9876543/);
  }
  expect(lines.join('\n')).toContain('+96477****543');
});

test('a provider echoing the phone in national form and with spaces: no log line and no stored last_error holds its digits', async () => {
  const captured = captureLog();
  let stored: (string | null)[];
  try {
    const s = await service({ SMS_MAX_ATTEMPTS: '2' });
    // The provider writes the number its own way, as providers do: national, spaced, dashed, without its +.
    gateway.script.push(
      { status: 503, body: '{"error":"route busy for 0770 123 4567, try later"}' },
      { status: 400, body: '{"error":"invalid destination 07701234567 (964-770-123-4567)","to":"0770.123.4567"}' },
    );
    await authCode(s.app, '864209', '+9647701234567');
    await until('the message has failed', async () => (await byStatus(s, 'failed')) === 1);
    await settle();
    stored = (await rows(s)).map((r) => r.lastError);
  } finally {
    captured.restore();
  }
  expect(gateway.requests).toHaveLength(2);
  // Its digits in any spelling: the last seven of the number with anything but digits between them.
  const digits = /1\D{0,3}2\D{0,3}3\D{0,3}4\D{0,3}5\D{0,3}6\D{0,3}7|864209/;
  const lines = captured.lines.map((l) => JSON.stringify(l));
  expect(lines.filter((l) => l.includes('SMS failed for good'))).toHaveLength(1);
  for (const line of lines) expect(line).not.toMatch(digits);
  expect(stored).toEqual([expect.stringMatching(/^HTTP 400: .*invalid destination 077\*{4}\d{3}\).*"to":"077\*{4}567"/)]);
  expect(stored[0]).not.toMatch(digits);
  // What is left still tells an operator which number it was, as the rest of the log does.
  expect(lines.join('\n')).toContain('077****567');
});

test('the outbox keeps any error it is given masked, whoever wrote it (both stores)', async () => {
  const s = await service({}, false);
  await authCode(s.app, '5151', '+9647701234567');
  await authCode(s.app, '5152', '+9647701234568');
  const now = new Date();
  const [a, b] = await s.store.outbox.claimDue('owner', now, new Date(now.getTime() + 60_000), 2, new Date(0));
  expect(await s.store.outbox.scheduleRetry(a!.id, 'owner', now, 'HTTP 503: busy for +964 770 123 4567', false)).toBe(true);
  expect(await s.store.outbox.markFailed(b!.id, 'owner', now, 'HTTP 400: {"to":"0770-123-4568","code":"5152"}', false)).toBe(true);
  const errors = (await rows(s)).map((r) => r.lastError).sort();
  expect(errors).toEqual(['HTTP 400: {"to":"077****568","code":"[removed]"}', 'HTTP 503: busy for +96477****567']);
});

test('the log gateway says once that nothing is sent, and writes the text to its own line', async () => {
  const captured = captureLog();
  try {
    const s = await service({ SMS_GATEWAY: 'log' });
    await authCode(s.app, '5555', '+9647701234567');
    await until('delivered', async () => (await byStatus(s, 'delivered')) === 1);
  } finally {
    captured.restore();
  }
  const { lines } = captured;
  expect(lines.filter((l) => /never really sent/.test(l.msg))).toHaveLength(1);
  const withCode = lines.filter((l) => JSON.stringify(l).includes('5555'));
  expect(withCode).toEqual([
    { level: 'info', msg: 'sms (log gateway, not sent)', fields: { phone: '+96477****567', text: 'رمز التحقق: 5555' } },
  ]);
  expect(gateway.requests).toEqual([]);
});

test('npm run outbox: list, list failed, retry one, retry all failed', async () => {
  const s = await service({ SMS_MAX_ATTEMPTS: '1' });
  gateway.script.push(200, 500, 500);
  for (let i = 1; i <= 3; i += 1) {
    await authCode(s.app, `${i}${i}${i}`, phone(i));
    await until('settled', async () => (await byStatus(s, 'pending')) === 0);
  }
  const env = { SQLITE_PATH: s.config.sqlitePath, ...(db === null ? {} : { DATABASE_URL: db.url }) };
  const run = async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await outboxCommand(argv, { out: (l) => out.push(l), err: (l) => err.push(l), env });
    return { code, out, err };
  };
  const all = await run('--list');
  expect(all.code).toBe(0);
  expect(all.out).toHaveLength(4);
  expect(all.out[0]).toMatch(/^id\tstatus\tphone/);
  expect(all.out.slice(1).map((l) => l.split('\t').slice(1, 3))).toEqual([
    ['failed', phone(3)],
    ['failed', phone(2)],
    ['delivered', phone(1)],
  ]);
  // No code in any field; the timestamps are left out of the search (a millisecond count of 111 is not a code).
  expect(all.out.join('\n').replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>')).not.toMatch(/111|222|333/);
  const failed = await run('--list', '--failed');
  expect(failed.out.slice(1).map((l) => l.split('\t')[2])).toEqual([phone(3), phone(2)]);
  expect(failed.out[1]).toContain('HTTP 500');

  const deliveredId = all.out[3]!.split('\t')[0]!;
  expect(await run('--retry', deliveredId)).toMatchObject({ code: 1, err: [expect.stringMatching(/cannot be sent again/)] });
  const failedId = failed.out[2]!.split('\t')[0]!;
  expect(await run('--retry', failedId)).toEqual({
    code: 0,
    out: ['1 message queued again; a running service sends it at its next poll'],
    err: [],
  });
  await until('resent', async () => (await byStatus(s, 'delivered')) === 2);
  expect(await run('--retry-failed')).toMatchObject({
    code: 0,
    out: ['1 message queued again; a running service sends it at its next poll'],
  });
  await until('all delivered', async () => (await byStatus(s, 'delivered')) === 3);
  expect(sentTo().map((m) => m.to)).toEqual([1, 2, 3, 2, 3].map(phone));

  expect((await run('--retry', 'x')).code).toBe(2);
  expect((await run()).code).toBe(2);
  expect((await run('--list', '--limit', '1')).out).toHaveLength(2);
});
