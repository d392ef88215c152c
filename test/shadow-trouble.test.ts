import http from 'node:http';
import { log } from '../src/basics/log';
import { TargetTrouble, TROUBLE_LINE_MS } from '../src/shadow/trouble';
import { freePort, request, servicesPerTest, TOKEN_PATH } from './helpers/service';

/**
 * Issue 40, point 5: a legacy host the copies cannot reach is said in the log, not only counted
 * (`outcome="legacy_error"`): a warning when copies start failing (the target and why), a reminder
 * with the count at most once a minute while they still fail, a line when they are answered again.
 */

describe('the lines, on a clock of their own', () => {
  let now: number;
  let lines: Array<[string, string, Record<string, unknown>]>;
  let trouble: TargetTrouble;

  beforeEach(() => {
    now = Date.parse('2026-03-01T08:00:00Z');
    lines = [];
    jest.spyOn(log, 'warn').mockImplementation((msg, fields = {}) => void lines.push(['warn', msg, fields]));
    jest.spyOn(log, 'info').mockImplementation((msg, fields = {}) => void lines.push(['info', msg, fields]));
    trouble = new TargetTrouble('http://legacy:8080/StudentService', 'the legacy host', () => now);
  });
  afterEach(() => jest.restoreAllMocks());

  test('a warning at the first failure, a reminder with the count at most once a minute, a line when answered again', () => {
    // The steps below count the minute in seconds.
    expect(TROUBLE_LINE_MS).toBe(60_000);
    trouble.settled(0, '', 5); // answered: nothing to say
    trouble.settled(3, 'connect ECONNREFUSED 10.0.0.9:8080', 0);
    for (let s = 1; s < 60; s += 1) {
      now += 1000;
      trouble.settled(2, 'connect ECONNREFUSED 10.0.0.9:8080', 0);
    }
    now += 1000; // a minute after the warning
    trouble.settled(1, 'no answer within 5000 ms', 0);
    now += 30_000;
    trouble.settled(1, 'no answer within 5000 ms', 0);
    now += 500;
    trouble.settled(0, '', 4);
    trouble.settled(0, '', 4);
    const target = 'http://legacy:8080/StudentService';
    expect(lines).toEqual([
      [
        'warn',
        'shadow copies to the legacy host fail',
        { target, reason: 'connect ECONNREFUSED 10.0.0.9:8080', failed: 3, since: '2026-03-01T08:00:00.000Z' },
      ],
      [
        'warn',
        'shadow copies to the legacy host still fail',
        { target, reason: 'no answer within 5000 ms', failed: 3 + 59 * 2 + 1, since: '2026-03-01T08:00:00.000Z' },
      ],
      [
        'info',
        'shadow copies to the legacy host answered again',
        { target, failed: 3 + 59 * 2 + 2, forMs: 90_500, lastReason: 'no answer within 5000 ms' },
      ],
    ]);
  });

  test('answers beside failures in one batch do not end the trouble; a batch of answers alone does', () => {
    trouble.settled(1, 'connect ECONNREFUSED 10.0.0.9:8080', 0);
    now += 1000;
    trouble.settled(1, 'connect ECONNREFUSED 10.0.0.9:8080', 7);
    expect(lines.map(([, msg]) => msg)).toEqual(['shadow copies to the legacy host fail']);
    now += 1000;
    trouble.settled(0, '', 1);
    expect(lines.map(([, msg]) => msg)).toEqual([
      'shadow copies to the legacy host fail',
      'shadow copies to the legacy host answered again',
    ]);
  });

  test('a target that flaps writes at most a warning and a recovery a minute; the failures between are counted into the next warning', () => {
    for (let s = 0; s < 600; s += 1) {
      // Every other second a failure, and an answer between: ten minutes of flapping.
      trouble.settled(s % 2 === 0 ? 1 : 0, 'the connection closed before the answer ended', s % 2 === 0 ? 0 : 1);
      now += 1000;
    }
    // A warning and a recovery a minute, in turns.
    expect(lines.map(([level]) => level)).toEqual(Array.from({ length: 10 }, () => ['warn', 'info']).flat());
    const warnings = lines.filter(([level]) => level === 'warn').map(([, , f]) => f);
    const recoveries = lines.filter(([level]) => level === 'info').map(([, , f]) => f);
    // The first minute's one failure, then each minute's 30: each said once, by the warning of its
    // minute and its recovery; the last 29 (after the last warning) wait for the next one.
    expect(warnings.map((f) => f.failed)).toEqual([1, ...Array(9).fill(30)]);
    expect(recoveries.map((f) => f.failed)).toEqual(warnings.map((f) => f.failed));
    expect(warnings[1]).toMatchObject({ intermittent: true, since: '2026-03-01T08:00:02.000Z' });
    expect(warnings[0]).not.toHaveProperty('intermittent');
  });

  test('in legacy-first mode the copies go to this service, and the lines say so', () => {
    const ours = new TargetTrouble('http://127.0.0.1:41234', 'this service', () => now);
    ours.settled(1, 'no answer within 5000 ms', 0);
    expect(lines).toEqual([['warn', 'shadow copies to this service fail', expect.objectContaining({ target: 'http://127.0.0.1:41234' })]]);
  });
});

describe('the service as built, copying to a legacy host that is not there', () => {
  const service = servicesPerTest();

  test('warns when copies start failing (the host and why), and says when the host answers again', async () => {
    const port = await freePort(); // nothing listens there: each copy's connection is refused
    const s = await service({ env: { SHADOW_URL: `http://127.0.0.1:${port}/`, SHADOW_LOG: '' } });
    for (let i = 0; i < 5; i += 1) expect((await request(s.port, TOKEN_PATH)).status).toBe(200);
    const failing = await s.waitFor((l) => l.msg === 'shadow copies to the legacy host fail');
    expect(failing).toMatchObject({
      level: 'warn',
      target: `http://127.0.0.1:${port}`,
      reason: `connect ECONNREFUSED 127.0.0.1:${port}`,
      failed: expect.any(Number),
    });

    // The host comes up: the next copies are answered (here differently: that is the comparison's business).
    const legacy = http.createServer((_req, res) => res.end('legacy'));
    await new Promise<void>((resolve) => legacy.listen(port, '127.0.0.1', resolve));
    try {
      const answered = s.waitFor((l) => l.msg === 'shadow copies to the legacy host answered again', 30_000);
      // Until a copy has been answered: copies sent just before the host came up may still fail.
      let done = false;
      void answered.then(
        () => (done = true),
        () => (done = true),
      );
      while (!done) await request(s.port, TOKEN_PATH);
      expect(await answered).toMatchObject({
        level: 'info',
        target: `http://127.0.0.1:${port}`,
        failed: expect.any(Number),
        forMs: expect.any(Number),
      });
      expect((await answered).failed as number).toBeGreaterThanOrEqual(5);
      expect(s.lines.filter((l) => /shadow copies to the legacy host/.test(l.msg)).map((l) => l.msg)).toEqual([
        'shadow copies to the legacy host fail',
        'shadow copies to the legacy host answered again',
      ]);
    } finally {
      await new Promise((resolve) => legacy.close(resolve));
    }
  }, 60_000);
});
