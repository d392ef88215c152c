import { Writable } from 'node:stream';
import {
  createLogger,
  cut,
  fieldsOf,
  lineOf,
  maskPhone,
  MAX_LINE_BYTES,
  MAX_MESSAGE_CHARS,
  MAX_VALUE_CHARS,
  type RequestFields,
  requestLine as requestLineOf,
} from '../src/basics/log';
import { maskText } from '../src/basics/mask';
import { FakeGateway } from './helpers/sms-gateway';
import { type LogLine, request, type Service, servicesPerTest } from './helpers/service';

/**
 * Issue 21, rule 6: logs an operator can use. Every value is bounded and masking holds whatever the
 * value holds; no line is over MAX_LINE_BYTES; a line about a request carries its id; a refused
 * request's line says why, without a secret. docs/logs.md describes the lines.
 */

const service = servicesPerTest();
const CODE = '480213';
const PHONE = '+9647701234567';
/** The part of PHONE a masked phone never shows. */
const HIDDEN = '7701234567';
/**
 * The SMS policy these tests rely on, whatever the defaults; a provider that cannot be reached, so
 * that an accepted code stays in the outbox and no gateway writes its text anywhere.
 */
const SMS_ENV = { SMS_DEFAULT_REGION: 'IQ', SMS_ALLOWED_COUNTRIES: 'IQ', SMS_GATEWAY: 'http', SMS_HTTP_URL: 'http://127.0.0.1:9/' };

const form = (id: string, body: string) => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Request-Id': id },
  body,
});
const soap12 = (id: string, body: string) => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/soap+xml; charset=utf-8', 'X-Request-Id': id },
  body,
});
const envelope12 = (body: string) =>
  `<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope"><soap:Body>${body}</soap:Body></soap:Envelope>`;
const requestLine = (s: Service, id: string) => s.waitFor((l) => l.reqId === id && l.msg === 'request');

function expectBounded(s: Service): void {
  const longest = Math.max(...s.raw.map((l) => Buffer.byteLength(l) + 1));
  expect(longest).toBeLessThanOrEqual(MAX_LINE_BYTES);
  expect(s.text).toEqual([]);
}

/** Lines written to a capture by a logger with the process logger's rules. */
function capture(): { logger: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(
        ...chunk
          .toString('utf8')
          .split('\n')
          .filter((l) => l !== ''),
      );
      done();
    },
  });
  return { logger: createLogger({ write: (s: string) => stream.write(s) }), lines };
}

describe('bounded values and lines', () => {
  test('a 3 MB phone full of **** is refused on a line of a few hundred bytes, masked', async () => {
    const s = await service({ env: SMS_ENV });
    const phone = `${PHONE}****${'9'.repeat(3_000_000)}`;
    const r = await request(
      s.port,
      '/AuthCodeSending.asmx/AuthCode',
      form('huge-phone', `code=${CODE}&phone=${encodeURIComponent(phone)}`),
    );
    expect(r.status).toBe(200);
    const refused = await s.waitFor((l) => l.reqId === 'huge-phone' && l.msg === 'AuthCode request not sent');
    expect(refused).toMatchObject({ reason: 'phone' });
    expect(refused.phone).toMatch(/^\+?\d{0,6}\*{4}\d{0,3}$/);
    await requestLine(s, 'huge-phone');
    expectBounded(s);
    expect(s.raw.join('\n')).not.toContain(HIDDEN);
  });

  test('stars in a value do not pass it as masked: the phone around them is masked', async () => {
    const s = await service({ env: SMS_ENV });
    // Each too long a number, so refused, and logged with the phone as sent.
    for (const [id, phone] of [
      ['stars-before', `****${PHONE}99999`],
      ['stars-inside', `${PHONE.slice(0, 8)}****${PHONE.slice(8)}99999`],
      ['stars-after', `${PHONE}****99999`],
    ]) {
      await request(s.port, '/AuthCodeSending.asmx/AuthCode', form(id, `code=${CODE}&phone=${encodeURIComponent(phone)}`));
      const line = await s.waitFor((l) => l.reqId === id && l.msg === 'AuthCode request not sent');
      expect(line.phone).toMatch(/^\+?\d{0,6}\*{4}\d{0,3}$/);
    }
    expect(s.raw.join('\n')).not.toContain(HIDDEN);
    expect(s.raw.join('\n')).not.toContain(CODE);
  });

  test('a 12 KB SOAPAction is cut in the reason, with a marker of the cut', async () => {
    const s = await service({ env: SMS_ENV });
    const action = `http://tempuri.org/${'A'.repeat(12_000)}`;
    const r = await request(s.port, '/PushNotificationMobile.asmx', {
      method: 'POST',
      headers: { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: action, 'X-Request-Id': 'long-action' },
      body: '<x/>',
    });
    expect(r.status).toBe(500);
    const line = await requestLine(s, 'long-action');
    expect(line.reason).toMatch(
      /^Server did not recognize the value of HTTP Header SOAPAction: http:\/\/tempuri\.org\/A+…\[\d+ more chars\]$/,
    );
    expect((line.reason as string).length).toBeLessThan(MAX_VALUE_CHARS + 30);
    expectBounded(s);
  });

  test('values are cut, at any depth; objects, arrays and keys are bounded; a stack keeps its frames', () => {
    const long = 'é'.repeat(10_000);
    const error = new Error(long);
    const fields = fieldsOf({
      a: long,
      deep: { b: { c: { d: { e: { f: 1 } } } } },
      list: Array.from({ length: 100 }, (_, i) => i),
      many: Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, i])),
      error,
    });
    expect(fields.a).toBe(`${'é'.repeat(MAX_VALUE_CHARS)}…[${10_000 - MAX_VALUE_CHARS} more chars]`);
    expect(JSON.stringify(fields.deep)).toBe('{"b":{"c":{"d":{"e":"[object]"}}}}');
    expect((fields.list as unknown[]).length).toBe(17);
    expect(Object.keys(fields.many as object)).toHaveLength(33);
    const err = fields.error as { message: string; stack: string; type: string };
    expect(err.type).toBe('Error');
    expect(err.message.length).toBeLessThan(MAX_VALUE_CHARS + 30);
    expect(err.stack).toMatch(/^Error: é+…\[\d+ more chars\]\n {4}at /);
    expect(JSON.stringify(fields).length).toBeLessThan(MAX_LINE_BYTES);
  });

  test('a surrogate pair is never split by a cut', () => {
    const text = `${'a'.repeat(MAX_VALUE_CHARS - 1)}😀tail`;
    expect(cut(text)).toBe(`${'a'.repeat(MAX_VALUE_CHARS - 1)}…[6 more chars]`);
  });

  test('the message is a value too, and no written line exceeds the bound', () => {
    const { logger, lines } = capture();
    logger.warn({ note: 'x' }, '€'.repeat(100_000));
    // Wide characters: 256 of them and a budget of such fields is still over 4 KB of UTF-8 escapes.
    logger.info(Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${i}`, '\u0001'.repeat(200)])), 'many control characters');
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(Buffer.byteLength(line) + 1).toBeLessThanOrEqual(MAX_LINE_BYTES);
    expect(JSON.parse(lines[0]).msg).toBe(`${'€'.repeat(MAX_MESSAGE_CHARS)}…[${100_000 - MAX_MESSAGE_CHARS} more chars]`);
    expect(JSON.parse(lines[1])).toMatchObject({ level: 'info', msg: 'many control characters', lineCut: expect.any(Number) });
    expect(lineOf('{"msg":"short"}\n')).toBe('{"msg":"short"}\n');
  });
});

describe('masking', () => {
  test('secrets go at any depth and in any case; a phone is masked whatever it is', () => {
    const fields = fieldsOf({
      code: CODE,
      params: { code: CODE, phone: PHONE },
      request: { headers: { Authorization: 'Bearer s3cr3t', COOKIE: 'sid=s3cr3t' } },
      phone: [PHONE, PHONE],
      error: Object.assign(new Error('no'), { code: 'ENOENT' }),
    });
    expect(JSON.stringify(fields)).not.toMatch(new RegExp(`${CODE}|s3cr3t|${HIDDEN}`));
    expect(fields).toMatchObject({
      code: '[redacted]',
      params: { code: '[redacted]', phone: '+96477****567' },
      request: { headers: { Authorization: '[redacted]', COOKIE: '[redacted]' } },
      error: { code: 'ENOENT' },
    });
  });

  test('only the masked form passes as masked', () => {
    expect(maskPhone(maskPhone(PHONE))).toBe('+96477****567');
    expect(maskPhone(`${PHONE}****`)).toBe('+96477****567');
    expect(maskPhone(`****${'1'.repeat(1_000_000)}`)).toBe('111111****111');
    expect(maskPhone(`${'*'.repeat(4)}${PHONE}`)).toBe('+96477****567');
    expect(maskPhone(null)).toBe('(none)');
    expect(maskPhone('(none)')).toBe('(none)');
  });
});

describe('phones in any spelling, codes by any name (issue 30, rule 6)', () => {
  /** PHONE's last seven digits, whatever stands between them: what no masked text may hold. */
  const SEVEN = /1\D{0,3}2\D{0,3}3\D{0,3}4\D{0,3}5\D{0,3}6\D{0,3}7/;

  test('a phone typed into the URL path or the SOAPAction is masked in the refusal reason', async () => {
    const s = await service({ env: SMS_ENV });
    const asked: [string, string, Parameters<typeof request>[2]][] = [
      ['path-national', '/AuthCodeSending.asmx/07701234567', { headers: { 'X-Request-Id': 'path-national' } }],
      ['path-spaced', '/AuthCodeSending.asmx/0770%20123%204567', { headers: { 'X-Request-Id': 'path-spaced' } }],
      ['path-plus', '/AuthCodeSending.asmx/%2B964-770-123-4567', { headers: { 'X-Request-Id': 'path-plus' } }],
      ['path-international', '/AuthCodeSending.asmx/00964-770-123-4567', { headers: { 'X-Request-Id': 'path-international' } }],
      ['path-word', '/AuthCodeSending.asmx/AuthCode07701234567', { headers: { 'X-Request-Id': 'path-word' } }],
      ...['http://tempuri.org/07701234567', '"http://tempuri.org/+964 770 123 4567"', 'urn:(0770) 123-4567'].map(
        (action, i): [string, string, Parameters<typeof request>[2]] => [
          `action-${i}`,
          '/AuthCodeSending.asmx',
          {
            method: 'POST',
            headers: { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: action, 'X-Request-Id': `action-${i}` },
            body: '<x/>',
          },
        ],
      ),
    ];
    for (const [id, path, init] of asked) {
      const r = await request(s.port, path, init);
      const line = await requestLine(s, id);
      // A `+` in a path is refused by IIS's request filtering (404.11), whose reason quotes no path.
      if (id === 'path-plus') {
        expect([id, r.status, line.reason]).toEqual([id, 404, expect.not.stringMatching(SEVEN)]);
        continue;
      }
      expect([id, r.status]).toEqual([id, 500]);
      expect([id, line.reason]).toEqual([id, expect.stringMatching(/(?:\+96477|00964|077|770)\*{4}567/)]);
    }
    const all = s.raw.join('\n');
    expect(all).not.toMatch(SEVEN);
    expect(all).not.toContain(HIDDEN);
  });

  test('every spelling the intake reads is masked, wherever it stands in a value', () => {
    const spellings = [
      '+9647701234567',
      '9647701234567',
      '009647701234567',
      '07701234567',
      '7701234567',
      '0770 123 4567',
      '0770-123-4567',
      '0770.123.4567',
      '(0770) 123 4567',
      '+964 (770) 123-4567',
      '00964 770 123 4567',
      '0770 - 123 - 4567',
      '٠٧٧٠١٢٣٤٥٦٧',
      '０７７０１２３４５６７',
      '0770/123/4567',
      'x07701234567',
      '%2B964%20770%20123%204567',
    ];
    for (const phone of spellings) {
      const fields = fieldsOf({ error: new Error(`HTTP 400: bad number ${phone}.`), note: `to=${phone};`, list: [`"${phone}"`] });
      const text = JSON.stringify(fields)
        .replace(/[٠-٩]/g, (d) => String(d.charCodeAt(0) - 0x660))
        .replace(/[０-９]/g, (d) => String(d.charCodeAt(0) - 0xff10));
      expect([phone, text]).toEqual([phone, expect.not.stringMatching(SEVEN)]);
    }
  });

  test('codes go by the name ASP.NET decodes, in a query, a form, a SOAP body and JSON', () => {
    const texts = [
      `/AuthCodeSending.asmx/AuthCode?%63ode=${CODE}&phone=1`,
      `c%6fde=${CODE}&x=1`,
      `CODE=${CODE}`,
      `a=1&%u0063ode=${CODE}`,
      `<soap:Body><AuthCode><code>${CODE}</code></AuthCode></soap:Body>`,
      `<x:CODE a="1">${CODE}</x:CODE>`,
      `{"code": "${CODE}"}`,
    ];
    for (const text of texts) expect([text, maskText(text)]).toEqual([text, expect.not.stringContaining(CODE)]);
    expect(JSON.stringify(fieldsOf({ url: texts[0], body: texts[1] }))).not.toContain(CODE);
  });

  test('ordinary ids, counts, timestamps, addresses and ports are kept as they are', () => {
    const kept = {
      reqId: '90943f17-ed0d-43b9-a82e-504c2777656d',
      key: 'abcdefab-1234-5678-1234-abcdefabcdef',
      hash: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
      id: 1001,
      ids: [1, 2, 3],
      count: 123456789012,
      bytesIn: 3000128,
      ms: 24.3,
      time: '2026-11-25T16:25:36.515Z',
      at: '2026-11-25 16:25:36',
      client: '192.168.100.200',
      v6: '2001:db8::7',
      url: 'http://127.0.0.1:54321/PushNotificationMobile.asmx/GetTokenDevice?id=dev-1001',
      error: 'connect ECONNREFUSED 127.0.0.1:8080',
      reason: 'body over MAX_BODY_BYTES',
      note: 'retry in 123456 ms; 16 rows',
    };
    expect(fieldsOf(kept)).toEqual(kept);
  });
});

describe('request id', () => {
  test('SMS refusal lines carry the id of their request: a bad phone and a limit', async () => {
    const s = await service({ env: { ...SMS_ENV, SMS_LIMIT_PER_PHONE: '1' } });
    await request(s.port, '/AuthCodeSending.asmx/AuthCode', form('bad-phone', `code=${CODE}&phone=12`));
    expect(await s.waitFor((l) => l.msg === 'AuthCode request not sent' && l.reason === 'phone')).toMatchObject({ reqId: 'bad-phone' });
    await request(s.port, '/AuthCodeSending.asmx/AuthCode', form('first', `code=111111&phone=${encodeURIComponent(PHONE)}`));
    await request(s.port, '/AuthCodeSending.asmx/AuthCode', form('over-limit', `code=222222&phone=${encodeURIComponent(PHONE)}`));
    expect(await s.waitFor((l) => l.msg === 'AuthCode request not sent' && l.reason === 'limit')).toMatchObject({
      reqId: 'over-limit',
      limit: 'phone',
      phone: '+96477****567',
    });
    expect(s.lines.filter((l) => l.msg === 'AuthCode request not sent')).toHaveLength(2);
  });

  test('a line written after its request ended (the dispatcher sending its code) does not carry its id', async () => {
    const gateway = new FakeGateway();
    const url = await gateway.listen();
    try {
      gateway.delayMs = 300;
      const s = await service({ env: { ...SMS_ENV, SMS_GATEWAY: 'http', SMS_HTTP_URL: url } });
      const r = await request(
        s.port,
        '/AuthCodeSending.asmx/AuthCode',
        form('woke-dispatcher', `code=${CODE}&phone=${encodeURIComponent(PHONE)}`),
      );
      expect(r.status).toBe(200);
      const sent = await s.waitFor((l) => /^SMS /.test(l.msg) && l.level === 'info');
      expect(sent.reqId).toBeUndefined();
      // The dispatcher's next rounds run from the timer that request's wake-up set.
      await request(
        s.port,
        '/AuthCodeSending.asmx/AuthCode',
        form('second', `code=${CODE}1&phone=${encodeURIComponent('+9647701234568')}`),
      );
      await s.waitFor((l) => /^SMS /.test(l.msg) && l !== sent);
      expect(s.lines.filter((l) => /^SMS /.test(l.msg)).map((l) => l.reqId)).toEqual([undefined, undefined]);
      // While a request is served, its lines do carry its id.
      await request(s.port, '/AuthCodeSending.asmx/AuthCode', form('refused', `code=${CODE}&phone=12`));
      expect(await s.waitFor((l) => l.msg === 'AuthCode request not sent')).toMatchObject({ reqId: 'refused' });
    } finally {
      await gateway.close();
    }
  });
});

describe('a refused request says why', () => {
  const cases: [string, Parameters<typeof request>[2], Partial<LogLine>][] = [
    [
      'malformed',
      soap12('malformed', '<soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope"><soap:Body>'),
      { status: 500, fault: 'Server', reason: expect.stringMatching(/^Unexpected end of file has occurred\./) },
    ],
    [
      'doctype',
      soap12('doctype', `<!DOCTYPE x [<!ENTITY e "${CODE}">]>${envelope12('')}`),
      { status: 500, reason: 'DTD is prohibited in this XML document.' },
    ],
    [
      'doctype-11',
      {
        method: 'POST',
        headers: { 'Content-Type': 'text/xml', SOAPAction: '"http://tempuri.org/AuthCode"', 'X-Request-Id': 'doctype-11' },
        body: '<!DOCTYPE x><x/>',
      },
      { status: 400, reason: 'DTD is prohibited in this XML document.' },
    ],
    [
      'missing',
      { method: 'GET', headers: { 'X-Request-Id': 'missing' } },
      { status: 500, fault: 'Client', reason: 'Missing parameter: phone.' },
    ],
    [
      'markup',
      soap12('markup', envelope12(`<AuthCode xmlns="http://tempuri.org/"><code>48<b/>${CODE}</code><phone>${PHONE}</phone></AuthCode>`)),
      { status: 400, reason: 'markup in a parameter' },
    ],
    [
      'dangerous',
      { method: 'GET', headers: { 'X-Request-Id': 'dangerous' } },
      { status: 500, reason: 'potentially dangerous value in query string field code' },
    ],
    [
      'media',
      { method: 'POST', headers: { 'Content-Type': 'text/plain', 'X-Request-Id': 'media' }, body: CODE },
      { status: 500, reason: 'Data at the root level is invalid. Line 1, position 1.' },
    ],
  ];
  const paths: Record<string, string> = {
    missing: `/AuthCodeSending.asmx/AuthCode?code=${CODE}`,
    dangerous: `/AuthCodeSending.asmx/AuthCode?code=%3Cb${CODE}&phone=${encodeURIComponent(PHONE)}`,
  };

  test.each(cases)('%s', async (id, init, expected) => {
    const s = await service({ env: SMS_ENV });
    const r = await request(s.port, paths[id] ?? '/AuthCodeSending.asmx', init);
    expect(r.status).toBe(expected.status);
    expect(await requestLine(s, id)).toMatchObject(expected);
    const all = s.raw.join('\n');
    expect(all).not.toContain(CODE);
    expect(all).not.toContain(HIDDEN);
  });

  test('an answered request has no reason', async () => {
    const s = await service();
    await request(s.port, '/PushNotificationMobile.asmx/GetTokenDevice?id=dev-1001', { headers: { 'X-Request-Id': 'fine' } });
    expect((await requestLine(s, 'fine')).reason).toBeUndefined();
  });
});

describe('the request line, written ahead (requestLine)', () => {
  const plain: RequestFields = {
    reqId: '1f0c9a8e-2b7d-4c1e-9f3a-5d6e7f8a9b0c',
    method: 'POST',
    endpoint: 'PushNotificationMobile',
    operation: 'GetTokenDevice',
    binding: 'soap11',
    status: 200,
    ms: 0.4,
    client: '127.0.0.1',
    bytesIn: 312,
    bytesOut: 598,
  };
  const cases: [string, RequestFields][] = [
    ['a small call', plain],
    ['a refusal with a fault and a reason', { ...plain, status: 500, fault: 'soap:Client', reason: 'no protocol in PROTOCOLS takes GET' }],
    [
      'no endpoint, operation or binding; no client',
      { ...plain, endpoint: undefined, operation: undefined, binding: undefined, client: null },
    ],
    ['a request id and a reason holding phones', { ...plain, reqId: 'call+9647701234567', reason: 'phone 07701 234 567 refused' }],
    ['quotes, backslashes, control characters and Arabic', { ...plain, reason: 'a "quoted" \\ path\t\u0001 حسين علي' }],
    ['a reason past the value limit', { ...plain, reason: `${'x'.repeat(300)} +9647701234567 ${'y'.repeat(300)}` }],
    ['a time that is not a number', { ...plain, ms: Number.NaN }],
  ];
  test.each(cases)('%s: the same bytes as the logger writes for it', (_what, fields) => {
    const { logger, lines } = capture();
    const now = Date.now();
    // In the order app/request-hooks.ts gives them, which is the order pino writes an object's fields in.
    const { reqId, method, endpoint, operation, binding, status, fault, reason, ms, client, bytesIn, bytesOut } = fields;
    logger.info({ reqId, method, endpoint, operation, binding, status, fault, reason, ms, client, bytesIn, bytesOut }, 'request');
    const ours = requestLineOf(fields, now);
    const time = (line: string) => line.replace(/^\{"level":"info","time":"[^"]+"/, '{"level":"info","time":"T"');
    expect(ours.endsWith('\n')).toBe(true);
    expect(time(ours.trimEnd())).toBe(time(lines[0]!));
    expect(JSON.parse(ours).time).toBe(new Date(now).toISOString());
  });
});
