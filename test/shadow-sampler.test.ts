import { BEHIND, Sampler } from '../src/shadow/sampler';

/** What shadowing compares when its copier falls behind (src/shadow/sampler.ts): one in N of each operation, N moving with how far behind. */

const GET = { operation: 'GetTokenDevice', binding: 'soap11' };
const ROSTER = { operation: 'GetStudentSchool', binding: 'soap11' };

function clock(): { now: () => number; advance: (ms: number) => void } {
  let t = 0;
  return { now: () => t, advance: (ms) => (t += ms) };
}

test('while the queue has room, every copy is compared, however long the copies wait in it', () => {
  const s = new Sampler();
  s.adjust(0);
  s.adjust(0.7);
  expect(Array.from({ length: 100 }, () => s.skip(GET)).some(Boolean)).toBe(false);
  expect(s.every).toBe(1);
});

test('behind, one in N of each operation and binding is compared, whatever the mix of traffic', () => {
  const s = new Sampler();
  s.adjust(BEHIND);
  s.adjust(BEHIND);
  expect(s.every).toBe(4);
  // 40 small calls for each roster, interleaved: each operation keeps exactly a quarter.
  const kept = { small: 0, roster: 0 };
  for (let i = 0; i < 4000; i++) if (!s.skip(GET)) kept.small++;
  for (let i = 0; i < 100; i++) if (!s.skip(ROSTER)) kept.roster++;
  expect(kept).toEqual({ small: 1000, roster: 25 });
  expect(s.skip({ operation: 'GetStudentSchool', binding: 'httpget' })).toBe(false);
});

test('a queue three quarters full: N doubles at each report, up to 1,024', () => {
  const s = new Sampler();
  s.adjust(0.75);
  expect(s.every).toBe(2);
  for (let i = 0; i < 20; i++) s.adjust(1);
  expect(s.every).toBe(1024);
});

test('without a report that the copier is behind, N halves every 250 ms, reports or none: a few seconds after an overload every copy is compared again', () => {
  const c = clock();
  const s = new Sampler(c.now);
  for (let i = 0; i < 3; i++) s.adjust(BEHIND);
  expect(s.every).toBe(8);
  c.advance(249);
  s.adjust(0);
  expect(s.every).toBe(8);
  c.advance(1);
  expect(s.every).toBe(4);
  // Behind again: doubled from where it was.
  s.adjust(0.9);
  expect(s.every).toBe(8);
  c.advance(750);
  expect(s.every).toBe(1);
  expect(s.skip(GET)).toBe(false);
  for (let i = 0; i < 20; i++) s.adjust(1);
  expect(s.every).toBe(1024);
  c.advance(2500);
  expect(s.every).toBe(1);
});
