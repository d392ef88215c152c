import { loadConfig } from '../src/config';
import { HttpGateway } from '../src/sms/gateways/http';
import { GatewayError } from '../src/sms/gateways';
import { twilioPreset } from '../src/config/sms';
import { MemoryLimiter } from '../src/sms/limits';
import { needsUnicode, renderMessage, ucs2Hex } from '../src/sms/message';
import { maskPhone } from '../src/basics/log';
import { checkRequest } from '../src/sms/validation';
import { smsReadiness, smsSummary } from '../src/sms/summary';
import { FakeGateway } from './helpers/sms-gateway';

const policy = (env: Record<string, string> = {}) => loadConfig(env).sms;

describe('validation', () => {
  test('numbers are normalised to E.164; without a country code only with SMS_DEFAULT_REGION', () => {
    expect(checkRequest('4821', '+964 770 123 4567', policy())).toEqual({ ok: true, code: '4821', phone: '+9647701234567' });
    expect(checkRequest('4821', '0770-123-4567', policy())).toEqual({ ok: false, reason: 'phone' });
    expect(checkRequest('4821', '0770-123-4567', policy({ SMS_DEFAULT_REGION: 'IQ' }))).toEqual({
      ok: true,
      code: '4821',
      phone: '+9647701234567',
    });
    expect(checkRequest('4821', '(0770) 123 4567', policy({ SMS_DEFAULT_REGION: 'IQ' }))).toMatchObject({ phone: '+9647701234567' });
  });

  test('SMS_ALLOWED_COUNTRIES refuses the rest; empty allows any', () => {
    const iq = policy({ SMS_ALLOWED_COUNTRIES: 'IQ,JO' });
    expect(checkRequest('1', '+962791234567', iq)).toMatchObject({ ok: true });
    expect(checkRequest('1', '+447911123456', iq)).toEqual({ ok: false, reason: 'country' });
    expect(checkRequest('1', '+447911123456', policy())).toMatchObject({ ok: true, phone: '+447911123456' });
  });

  test('premium-rate and other non-mobile numbers are refused', () => {
    expect(checkRequest('1', '+19005550100', policy())).toEqual({ ok: false, reason: 'not_mobile' });
  });

  test.each([[null], [''], ['1234567890123'], ['12 34'], ['12;34'], ['١٢٣٤٥٦٧٨٩٠١٢٣']])('code %j is refused', (code) => {
    expect(checkRequest(code, '+9647701234567', policy())).toEqual({ ok: false, reason: 'code' });
  });

  test.each([['A1b2C3'], ['123456789012'], ['١٢٣٤']])('code %j is accepted', (code) => {
    expect(checkRequest(code, '+9647701234567', policy())).toMatchObject({ ok: true, code });
  });

  test.each([[null], [''], ['+964770'], ['not a phone'], ['+9647701234567'.padEnd(41, '0')]])('phone %j is refused', (phone) => {
    expect(checkRequest('1', phone, policy({ SMS_DEFAULT_REGION: 'IQ' }))).toEqual({ ok: false, reason: 'phone' });
  });

  test('phones are masked: country and operator prefix, four stars, last three digits', () => {
    expect(maskPhone('+9647701234567')).toBe('+96477****567');
    expect(maskPhone('+447911123456')).toBe('+44791****456');
    // Without its country: the trunk and operator digits only (it showed nine of eleven digits before).
    expect(maskPhone('0770 123 4567')).toBe('077****567');
    expect(maskPhone('12')).toBe('****');
    expect(maskPhone(null)).toBe('(none)');
  });
});

describe('message', () => {
  test('the template takes the code; Arabic needs UCS-2, Latin text does not', () => {
    expect(renderMessage('Your code is {code}. ({code})', '42')).toBe('Your code is 42. (42)');
    expect(needsUnicode('Your verification code is 4821')).toBe(false);
    expect(needsUnicode('رمز التحقق 4821')).toBe(true);
    expect(ucs2Hex('رمز 1')).toBe('0631064506320020' + '0031');
  });
});

describe('HTTP gateway', () => {
  let fake: FakeGateway;
  let url: string;
  beforeEach(async () => {
    fake = new FakeGateway();
    url = await fake.listen();
  });
  afterEach(() => fake.close());

  const http = (env: Record<string, string>) =>
    new HttpGateway(loadConfig({ SMS_GATEWAY: 'http', SMS_HTTP_URL: `${url}/sms`, SMS_DEFAULT_REGION: 'IQ', ...env }).sms.http);
  const message = { phone: '+9647701234567', code: '4821', text: 'رمز "التحقق" & 4821', key: 'sms-k1' };

  test('a JSON body escapes the values inside the template’s strings; headers are sent', async () => {
    await http({
      SMS_HTTP_HEADERS: '{"X-Api-Key":"k-1"}',
      SMS_HTTP_BODY: '{"to":"{phone}","text":"{message}","unicode":"{unicode}","c":"{code}","k":"{key}"}',
    }).send(message);
    const [req] = fake.requests;
    expect(req!.method).toBe('POST');
    expect(req!.url).toBe('/sms');
    expect(req!.headers['x-api-key']).toBe('k-1');
    expect(req!.headers['idempotency-key']).toBe('sms-k1');
    expect(JSON.parse(req!.body)).toEqual({ to: '+9647701234567', text: 'رمز "التحقق" & 4821', unicode: '1', c: '4821', k: 'sms-k1' });
  });

  test('a form body is UTF-8 form encoding; PUT and the UCS-2 hex form are available', async () => {
    await http({ SMS_HTTP_FORMAT: 'form', SMS_HTTP_METHOD: 'put', SMS_HTTP_BODY: 'to={phone}&text={message}&hex={ucs2}' }).send(message);
    const [req] = fake.requests;
    expect(req!.method).toBe('PUT');
    expect(req!.headers['content-type']).toBe('application/x-www-form-urlencoded; charset=utf-8');
    const form = new URLSearchParams(req!.body);
    expect(form.get('to')).toBe('+9647701234567');
    expect(form.get('text')).toBe(message.text);
    expect(form.get('hex')).toBe(ucs2Hex(message.text));
  });

  test.each([
    [500, true],
    [503, true],
    [429, true],
    [400, false],
    [401, false],
    [404, false],
  ])('HTTP %i: retryable %s', async (status, retryable) => {
    fake.script.push(status);
    const err = await http({})
      .send(message)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ retryable, message: `HTTP ${status}: {"message":"try later"}` });
  });

  test('the idempotency header can be renamed or left out', async () => {
    await http({ SMS_HTTP_IDEMPOTENCY_HEADER: 'X-Request-Id' }).send(message);
    await http({ SMS_HTTP_IDEMPOTENCY_HEADER: '' }).send(message);
    expect(fake.requests.map((r) => [r.headers['x-request-id'], r.headers['idempotency-key']])).toEqual([
      ['sms-k1', undefined],
      [undefined, undefined],
    ]);
  });

  test('a time-out and a dropped connection are retryable answers lost; a refused connection sent nothing', async () => {
    fake.script.push('hang', 'drop');
    await expect(http({ SMS_HTTP_TIMEOUT_MS: '100' }).send(message)).rejects.toMatchObject({
      retryable: true,
      answerLost: true,
      message: 'no answer within 100 ms',
    });
    await expect(http({}).send(message)).rejects.toMatchObject({
      retryable: true,
      answerLost: true,
      message: expect.stringMatching(/^request failed/),
    });
    expect(fake.delivered).toBe(1);
    // A port just freed: nothing listens there.
    const spare = new FakeGateway();
    const spareUrl = await spare.listen();
    await spare.close();
    const closed = new HttpGateway({ ...loadConfig({}).sms.http, url: `${spareUrl}/sms` });
    await expect(closed.send(message)).rejects.toMatchObject({
      retryable: true,
      answerLost: false,
      message: 'request failed (ECONNREFUSED)',
    });
  });

  test('the Twilio preset posts the form Twilio documents, with basic auth', async () => {
    const sid = `AC${'ab'.repeat(16)}`;
    const gw = new HttpGateway(
      twilioPreset({ accountSid: sid, authToken: 'tok', from: '+15005550006', apiUrl: url, timeoutMs: 1000 }),
      'twilio',
    );
    await gw.send(message);
    const [req] = fake.requests;
    expect(req!.url).toBe(`/2010-04-01/Accounts/${sid}/Messages.json`);
    expect(req!.headers.authorization).toBe(`Basic ${Buffer.from(`${sid}:tok`).toString('base64')}`);
    // Twilio documents no idempotency key for messages: none is sent.
    expect(req!.headers['idempotency-key']).toBeUndefined();
    expect(Object.fromEntries(new URLSearchParams(req!.body))).toEqual({ To: '+9647701234567', From: '+15005550006', Body: message.text });
    const service = twilioPreset({ accountSid: sid, authToken: 'tok', from: `MG${'0'.repeat(32)}`, apiUrl: url, timeoutMs: 1000 });
    expect(service.body).toBe(`To={phone}&MessagingServiceSid=MG${'0'.repeat(32)}&Body={message}`);
  });
});

describe('memory limiter (what the store reported full)', () => {
  const check = (key: string, limit: number) => ({ kind: 'phone', key, limit, windowMs: 60_000 });

  test("refuses only what a remembered window holds at the check's limit, until the window ends", async () => {
    const l = new MemoryLimiter();
    const until = Date.now() + 60_000;
    await l.remember([
      { key: 'a', hits: 3, until },
      { key: 'gone', hits: 9, until: Date.now() - 1 },
    ]);
    expect(await l.knownFull([check('x', 1), check('a', 3)])).toEqual(check('a', 3));
    // A higher limit (raised since) is not known to be reached: the store decides.
    expect(await l.knownFull([check('a', 4)])).toBeNull();
    expect(await l.knownFull([check('gone', 1)])).toBeNull();
    await l.remember([{ key: 'b', hits: 1, until: Date.now() + 30 }]);
    expect(await l.knownFull([check('b', 1)])).not.toBeNull();
    await new Promise((r) => setTimeout(r, 50));
    expect(await l.knownFull([check('b', 1)])).toBeNull();
  });

  test('bounded: past its size the oldest are forgotten (only speed is lost)', async () => {
    const l = new MemoryLimiter(100);
    const until = Date.now() + 60_000;
    for (let i = 0; i < 1000; i += 1) await l.remember([{ key: `k${i}`, hits: 1, until }]);
    expect(l.size).toBeLessThanOrEqual(100);
    expect(await l.knownFull([check('k999', 1)])).not.toBeNull();
    expect(await l.knownFull([check('k0', 1)])).toBeNull();
  });
});

describe('what the start line and /readyz say about SMS', () => {
  test('where codes go, to which countries, how long they live', () => {
    expect(smsSummary(policy())).toBe(
      'SMS: codes are queued, not sent (no gateway: set SMS_GATEWAY); to any country; codes expire after 10 min',
    );
    expect(smsReadiness(policy())).toBe('SMS: codes are queued, not sent: no gateway is configured (SMS_GATEWAY=none)');
    const sid = `AC${'ab'.repeat(16)}`;
    const twilio = policy({
      SMS_GATEWAY: 'twilio',
      TWILIO_ACCOUNT_SID: sid,
      TWILIO_AUTH_TOKEN: 't',
      TWILIO_FROM: '+1',
      SMS_ALLOWED_COUNTRIES: 'IQ,JO',
      SMS_CODE_TTL_SECONDS: '90',
    });
    expect(smsSummary(twilio)).toBe('SMS: codes sent by twilio; to IQ, JO; codes expire after 90 s');
    expect(smsReadiness(twilio)).toBeUndefined();
    expect(smsSummary(policy({ SMS_GATEWAY: 'log', SMS_DEFAULT_REGION: 'IQ' }))).toBe(
      'SMS: codes are written to the log, not sent (SMS_GATEWAY=log, for development); to IQ; codes expire after 10 min',
    );
  });
});
