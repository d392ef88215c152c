import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { callerKey, forwardedAddress, inRanges, parseRange } from '../src/basics/address';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { startLine } from '../src/process/start-line';
import { createSms, type Sms } from '../src/sms';
import { openStore } from '../src/store/open';
import type { Store } from '../src/store/store';
import { clientAddress } from '../src/transport/context';
import { captureLog } from './helpers/sms-gateway';

/**
 * Issue 21, rule 1: who the caller is, behind each proxy the recipes in deploy/ put in front, and
 * what the per-address SMS limit counts (an IPv6 caller by its /64; exempt callers not at all).
 */

describe('an X-Forwarded-For entry, in every form the shipped proxies write', () => {
  test.each([
    ['nginx, IPv4', '203.0.113.7', '203.0.113.7'],
    ['nginx, IPv6 (bare)', '2001:db8::7', '2001:db8::7'],
    ['IIS ARR / HttpPlatformHandler, IPv4 with the port', '203.0.113.7:50123', '203.0.113.7'],
    ['IIS ARR / HttpPlatformHandler, IPv6 bracketed with the port', '[2001:db8::7]:50123', '2001:db8::7'],
    ['IPv6 bracketed without a port', '[2001:db8::7]', '2001:db8::7'],
    ['IPv6 written in full and upper case', '2001:0DB8:0000:0000:0000:0000:0000:0007', '2001:db8::7'],
    ['IPv4-mapped IPv6 (a dual-stack listener)', '::ffff:203.0.113.7', '203.0.113.7'],
    ['IPv4-mapped IPv6 in hex', '::FFFF:CB00:7107', '203.0.113.7'],
    ['IPv4-mapped, bracketed with the port', '[::ffff:203.0.113.7]:50123', '203.0.113.7'],
    ['an IPv6 zone', 'fe80::7%eth0', 'fe80::7'],
    ['surrounding spaces', '  203.0.113.7  ', '203.0.113.7'],
  ])('%s: %s', (_form, entry, expected) => {
    expect(forwardedAddress(entry)).toBe(expected);
  });

  test.each([
    'unknown',
    '',
    'school.example',
    '203.0.113',
    '203.0.113.7:',
    '[2001:db8::7',
    '2001:db8::7]:80',
    '_hidden',
    '203.0.113.7:80:80',
  ])('no address in %j', (entry) => {
    expect(forwardedAddress(entry)).toBeNull();
  });
});

describe('clientAddress: the one rule, over a real socket', () => {
  let server: http.Server;
  let port: number;
  let trust = true;
  beforeAll(async () => {
    server = http.createServer((req, res) => res.end(String(clientAddress(req, trust))));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const ask = (headers: Record<string, string | string[]>, localAddress = '127.0.0.1') =>
    new Promise<string>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: '/', headers, localAddress, agent: false }, (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve(body));
        })
        .on('error', reject);
    });

  test('with TRUST_PROXY, a request without the header is its peer, and the log says once that the proxy sets none', async () => {
    trust = true;
    const log = captureLog();
    try {
      expect(await ask({}, '127.0.0.9')).toBe('127.0.0.9');
      expect(await ask({ 'X-Forwarded-For': 'unknown' }, '127.0.0.9')).toBe('127.0.0.9');
      expect(log.lines.filter((l) => l.level === 'warn')).toEqual([
        {
          level: 'warn',
          msg: expect.stringContaining('TRUST_PROXY is on but a request came without a readable X-Forwarded-For'),
          fields: { peer: '127.0.0.9' },
        },
      ]);
    } finally {
      log.restore();
    }
  });

  test.each([
    ['nginx appended to what the client sent', '198.51.100.1, 203.0.113.7', '203.0.113.7'],
    ['ARR appended ip:port to what the client sent', '198.51.100.1, 203.0.113.7:50123', '203.0.113.7'],
    ['ARR appended [v6]:port', '198.51.100.1,[2001:db8:5:6::9]:443', '2001:db8:5:6::9'],
    ["a last entry that is no address: the proxy's own", '203.0.113.7, unknown', '127.0.0.9'],
  ])('with TRUST_PROXY, %s', async (_case, header, expected) => {
    trust = true;
    expect(await ask({ 'X-Forwarded-For': header }, '127.0.0.9')).toBe(expected);
  });

  test('with TRUST_PROXY, two X-Forwarded-For header lines are one list: the last entry counts', async () => {
    trust = true;
    expect(await ask({ 'X-Forwarded-For': ['198.51.100.1', '203.0.113.8:1'] })).toBe('203.0.113.8');
  });

  test('without TRUST_PROXY the header is ignored: the socket peer counts, each source address apart', async () => {
    trust = false;
    expect(await ask({ 'X-Forwarded-For': '203.0.113.7' }, '127.0.0.2')).toBe('127.0.0.2');
    expect(await ask({}, '127.0.0.3')).toBe('127.0.0.3');
  });
});

describe('what the per-address limit counts', () => {
  test('an IPv4 caller by its address, an IPv6 caller by its /64', () => {
    expect(callerKey('203.0.113.7')).toBe('203.0.113.7');
    expect(callerKey('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64');
    expect(callerKey('2001:db8:1:2::1')).toBe(callerKey('2001:db8:1:2:ffff::1'));
    expect(callerKey('2001:db8:1:3::1')).not.toBe(callerKey('2001:db8:1:2::1'));
  });

  test('ranges: addresses and CIDRs of both families, host bits cleared, mapped IPv4 as IPv4', () => {
    const ranges = ['10.0.0.0/8', '192.0.2.7', '2001:db8:ab::/48', '::ffff:172.16.0.0/108'].map((r) => parseRange(r));
    expect(ranges.map((r) => (typeof r === 'string' ? r : `${r.address}/${r.prefix}`))).toEqual([
      '10.0.0.0/8',
      '192.0.2.7/32',
      '2001:db8:ab::/48',
      '172.16.0.0/12',
    ]);
    const valid = ranges.filter((r) => typeof r !== 'string');
    expect(['10.200.1.1', '192.0.2.7', '2001:db8:ab:ffff::1', '172.31.255.255'].map((a) => inRanges(a, valid))).toEqual([
      true,
      true,
      true,
      true,
    ]);
    expect(['11.0.0.1', '192.0.2.8', '2001:db8:ac::1', '172.32.0.0', '::a00:1'].map((a) => inRanges(a, valid))).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});

describe('SMS_LIMIT_EXEMPT, validated once at start', () => {
  test('accepts a list of IPv4 and IPv6 addresses and ranges', () => {
    const config = loadConfig({ SMS_LIMIT_EXEMPT: ' 10.1.2.3/8, 192.0.2.7 ,2001:DB8::/64,' });
    expect(config.sms.limitExempt).toEqual([
      { address: '10.0.0.0', family: 4, prefix: 8 },
      { address: '192.0.2.7', family: 4, prefix: 32 },
      { address: '2001:db8::', family: 6, prefix: 64 },
    ]);
    expect(loadConfig({}).sms.limitExempt).toEqual([]);
  });

  test.each([
    ['school-app.example', 'not an IP address or CIDR range'],
    ['10.0.0.0/33', 'the prefix length must be from 1 to 32'],
    ['2001:db8::/129', 'the prefix length must be from 1 to 128'],
    ['10.0.0.0/x', 'the prefix length must be a whole number'],
    ['0.0.0.0/0', 'a /0 range exempts every caller'],
    ['::/0', 'a /0 range exempts every caller'],
    ['10.0.0.1/8/8', 'not an IP address or CIDR range'],
  ])('refuses %j with one line naming the variable', (value, why) => {
    expect(() => loadConfig({ SMS_LIMIT_EXEMPT: `192.0.2.7,${value}` })).toThrow(
      new RegExp(`^SMS_LIMIT_EXEMPT must be IP addresses or CIDR ranges .*; "${value.replace(/[.*/]/g, '\\$&')}": ${why}`),
    );
  });

  test('the start line names the exempt callers and says what still applies', () => {
    const line = startLine(loadConfig({ SMS_LIMIT_EXEMPT: '10.0.0.5,2001:db8:0:0:1::/80' }), 8080, { students: 1, devices: 1 }, 1);
    expect(line).toContain(
      'SMS per-address limit not applied to 10.0.0.5, 2001:db8:0:0:1::/80 (the per-phone limit and the global budgets still are)',
    );
    expect(startLine(loadConfig({}), 8080, { students: 1, devices: 1 }, 1)).not.toContain('per-address');
  });
});

describe('the per-address limit through the app (behind a trusted proxy)', () => {
  let dir: string;
  const opened: { sms: Sms; store: Store }[] = [];
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'client-address-'));
  });
  afterEach(async () => {
    for (const { sms, store } of opened.splice(0)) {
      await sms.close();
      await store.close();
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** The app with its intake; no dispatcher runs, so what the intake accepted stays in the outbox to count. */
  async function service(env: Record<string, string>) {
    const config = loadConfig({
      SQLITE_PATH: path.join(dir, 'sms.db'),
      TRUST_PROXY: 'true',
      SMS_DEFAULT_REGION: 'IQ',
      SMS_ALLOWED_COUNTRIES: 'IQ',
      SMS_LIMIT_PER_PHONE: '5',
      SMS_LIMIT_PER_ADDRESS: '2',
      ...env,
    });
    const store = await openStore(config);
    const sms = createSms(config.sms, store);
    opened.push({ sms, store });
    const app = await createApp(config, store, { intake: sms.intake });
    let n = 0;
    /** One code from `forwardedFor`, to a phone of its own (no other limit bites); resolves to whether it was queued. */
    const send = async (forwardedFor: string) => {
      const before = (await store.outbox.list(false, 1000)).length;
      n += 1;
      const res = await request(app)
        .post('/AuthCodeSending.asmx/AuthCode')
        .set('X-Forwarded-For', forwardedFor)
        .type('form')
        .send({ code: String(1000 + n), phone: `+96477012${String(n).padStart(5, '0')}` });
      expect(res.status).toBe(200);
      return (await store.outbox.list(false, 1000)).length > before;
    };
    return { send };
  }

  const sendAll = async (send: (f: string) => Promise<boolean>, from: string[]) => {
    const out: boolean[] = [];
    for (const f of from) out.push(await send(f));
    return out;
  };

  test("ARR's ip:port entries count per client address, not per port or as the proxy", async () => {
    const { send } = await service({});
    expect(
      await sendAll(send, ['203.0.113.7:50001', '203.0.113.7:50002', '203.0.113.7:50003', '[2001:db8::1]:50004', '203.0.113.8:50005']),
    ).toEqual([true, true, false, true, true]);
  });

  test('IPv6 callers are counted by their /64: another address of the same /64 is the same caller', async () => {
    const { send } = await service({});
    expect(await sendAll(send, ['2001:db8:1:2::1', '[2001:db8:1:2:ffff:1:2:3]:443', '2001:db8:1:2::3', '2001:db8:1:3::1'])).toEqual([
      true,
      true,
      false,
      true,
    ]);
  });

  test('an exempt caller (address or range) is not held by the per-address limit; others are', async () => {
    const { send } = await service({ SMS_LIMIT_EXEMPT: '198.51.100.10,2001:db8:ff::/48' });
    const exempt = await sendAll(send, [
      '198.51.100.10',
      '198.51.100.10:1',
      '198.51.100.10',
      '198.51.100.10',
      '2001:db8:ff:1::1',
      '2001:db8:ff:2::1',
      '2001:db8:ff:3::1',
    ]);
    expect(exempt).toEqual(Array(7).fill(true));
    expect(await sendAll(send, ['198.51.100.11', '198.51.100.11', '198.51.100.11'])).toEqual([true, true, false]);
  });

  test('an exempt caller still meets the global budget', async () => {
    const { send } = await service({ SMS_LIMIT_EXEMPT: '198.51.100.10', SMS_LIMIT_GLOBAL_PER_MINUTE: '3' });
    expect(await sendAll(send, Array(5).fill('198.51.100.10'))).toEqual([true, true, true, false, false]);
  });
});
