import fs from 'fs';
import path from 'path';
import { ask, type Case } from '../scripts/legacy/ask';
import { type Answer, compareAnswers, placeholdBase } from '../src/shadow/compare';
import { FIXTURES, listening } from './helpers/app';

/**
 * The protocols switch (PROTOCOLS, a web.config's `<webServices><protocols>`), replayed against the
 * legacy host's answers with the same switch (recorded by scripts/record-protocols.ts): each protocol
 * left out in turn, SOAP 1.1 with HTTP POST alone, and HTTP without SOAP.
 *
 * Where the recording host (Mono) is not IIS, only what IIS shares with it is compared:
 * - ASP.NET's runtime error page (a refused protocol) is Mono's own design: the status and an HTML
 *   runtime error page are compared, not the markup;
 * - Mono's help pages are its own design and its `?op=` pages fail with a 500 where .NET renders them:
 *   help pages compare status and media type, and `?op=` only where Documentation is off.
 */
interface Recording {
  protocols: string;
  cases: (Case & { legacy: Answer })[];
}

const recordings = (JSON.parse(fs.readFileSync(path.join(FIXTURES, 'protocols.json'), 'utf8')) as { recordings: Recording[] }).recordings;
const isRuntimeErrorPage = (a: Answer) => /^text\/html\b/.test(a.headers['content-type'] ?? '') && a.body.includes('Runtime Error');

test('every configuration was recorded', () => {
  expect(recordings.map((r) => r.protocols)).toEqual([
    'HttpSoap,HttpPost',
    'HttpSoap12,HttpGet,HttpPost,Documentation',
    'HttpSoap,HttpGet,HttpPost,Documentation',
    'HttpSoap,HttpSoap12,HttpPost,Documentation',
    'HttpSoap,HttpSoap12,HttpGet,Documentation',
    'HttpSoap,HttpSoap12,HttpGet,HttpPost',
    'HttpGet,HttpPost,Documentation',
  ]);
});

describe.each(recordings.map((r) => [r.protocols, r] as const))('PROTOCOLS=%s', (protocols, recording) => {
  const served = listening({ PROTOCOLS: protocols });

  const documentation = protocols.split(',').includes('Documentation');
  const compared = recording.cases.filter((c) => !(c.name.endsWith('/help-op') && documentation));

  test.each(compared.map((c) => [c.name, c] as const))('%s agrees with the legacy host', async (_name, c) => {
    const ours = await ask(served.base, c, false);
    if (isRuntimeErrorPage(c.legacy)) {
      expect([ours.status, isRuntimeErrorPage(ours)]).toEqual([c.legacy.status, true]);
      expect(ours.headers['content-length']).toBe(String(Buffer.byteLength(ours.body)));
      return;
    }
    if (c.kind === 'help') {
      expect([ours.status, ours.headers['content-type']?.split(';')[0]]).toEqual([c.legacy.status, c.legacy.headers['content-type']?.split(';')[0]]);
      return;
    }
    if (c.kind === 'page') ours.body = placeholdBase(ours.body, served.base, c.path);
    expect(compareAnswers(c.kind, c.legacy, ours)).toEqual([]);
  });

  test('the help page offers only the enabled protocols', async () => {
    if (!documentation) return;
    const c = recording.cases.find((x) => x.name === 'PushNotificationMobile/help-op')!;
    const page = (await ask(served.base, c, false)).body;
    const on = new Set(protocols.split(','));
    expect(page.includes('<h3>SOAP 1.1</h3>')).toBe(on.has('HttpSoap'));
    expect(page.includes('<h3>SOAP 1.2</h3>')).toBe(on.has('HttpSoap12'));
    expect(page.includes('<h3>HTTP GET</h3>')).toBe(on.has('HttpGet'));
    expect(page.includes('<h3>HTTP POST</h3>')).toBe(on.has('HttpPost'));
    expect(page.includes('<form')).toBe(on.has('HttpPost'));
    // The test asks from 127.0.0.1, a local caller: without HTTP POST the help generator gives it this
    // text; a remote caller's is in test/localhost.test.ts.
    expect(page.includes('The test form is only available for methods with primitive types as parameters.')).toBe(!on.has('HttpPost'));
  });
});
