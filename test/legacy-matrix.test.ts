import { ask } from '../scripts/legacy/ask';
import { accepted, kindFor } from '../scripts/legacy/accepted';
import { casesOf, envOf, has, MATRIX } from '../scripts/legacy/matrix';
import { comparable, type Recorded, readRecording } from '../scripts/legacy/recording';
import { compareAnswers } from '../src/shadow/compare';
import { listening } from './helpers/app';

/**
 * Every configuration of the site matrix (scripts/legacy/matrix.ts: namespaces with and without a
 * trailing slash and a URN, the site root and a virtual directory, web.config's protocols switched
 * on and off) replayed against our service configured the same way: each request the legacy host was
 * put (test/fixtures/legacy/NAME.json, recorded by `npm run record-legacy`) must be answered as it
 * answered, except the differences scripts/legacy/accepted.ts lists with their reasons (Mono is not
 * .NET there).
 *
 * The legacy host reports every caller as 10.1.2.3, a remote one (AsmxHost.cs); ours is told the same
 * by a trusted proxy's X-Forwarded-For. Both are asked for a URL on 127.0.0.1, and ASMX counts a
 * caller local when `request.Url.IsLoopback || request.IsLocal` (HttpPostLocalhostServerProtocol.cs):
 * so HttpPostLocalhost and the help page's test form meet a local caller on both (the legacy host
 * builds every URL on 127.0.0.1 whatever the Host header; ours reads the Host header, as IIS does).
 */
const CALLER = { 'X-Forwarded-For': '10.1.2.3' };

/** Configurations recorded but not yet replayed, and why (none today). */
const PENDING: Record<string, string> = {};

if (Object.keys(PENDING).length > 0) test.each(Object.entries(PENDING))('%s is recorded and holds the corpus (replay pending: %s)', (name) => {
  const config = MATRIX.find((c) => c.name === name)!;
  expect(requestsOf(readRecording(name).cases)).toEqual(casesOf(config));
});
const remote = <T extends { headers: Record<string, string> }>(c: T): T => ({ ...c, headers: { ...c.headers, ...CALLER } });

const requestsOf = (cases: Recorded[]) => cases.map(({ legacy: _legacy, ...request }) => request);
const faultCode = (body: string) => /<(?:faultcode|soap:Value)>([^<]*)</.exec(body)?.[1];

test('every configuration has its recording, and nothing else is recorded', () => {
  const fs = jest.requireActual<typeof import('fs')>('fs');
  const { RECORDINGS } = jest.requireActual<typeof import('../scripts/legacy/recording')>('../scripts/legacy/recording');
  expect(fs.readdirSync(RECORDINGS).sort()).toEqual(MATRIX.map((c) => `${c.name}.json`).sort());
});

describe.each(MATRIX.filter((c) => PENDING[c.name] === undefined).map((c) => [c.name, c] as const))('%s', (_name, config) => {
  const recording = readRecording(config.name);
  const served = listening({ ...envOf(config), TRUST_PROXY: 'true' });
  const base = () => `${served.base}${config.virtualDir}`;

  test('the recording was made under this configuration and holds the corpus, case for case', () => {
    expect(recording.configuration).toEqual(config);
    expect(requestsOf(recording.cases)).toEqual(casesOf(config));
  });

  const checked = recording.cases.filter((c) => accepted(config, c.name) === undefined);
  test.each(checked.map((c) => [c.name, c] as const))('%s agrees with the legacy host', async (_case, c) => {
    const ours = comparable(await ask(base(), remote(c), false), base(), c.path);
    expect(compareAnswers(kindFor(c, c.legacy), c.legacy, ours)).toEqual([]);
  });

  test('malformed requests among the accepted differences still get the legacy status and fault code', async () => {
    for (const c of recording.cases.filter((x) => accepted(config, x.name) !== undefined && x.name.includes('/malformed-'))) {
      const ours = await ask(base(), remote(c), false);
      expect([c.name, ours.status, faultCode(ours.body)]).toEqual([c.name, c.legacy.status, faultCode(c.legacy.body)]);
      expect(ours.body).not.toMatch(/node_modules|\bat \w+ \(|\/src\//);
    }
  });

  test('the help page offers only the enabled protocols', async () => {
    const c = recording.cases.find((x) => /^(pages|protocols)\/PushNotificationMobile\/help-op(-GetTokenDevice)?$/.test(x.name))!;
    const ours = await ask(base(), remote(c), false);
    if (!has(config, 'Documentation')) {
      expect([ours.status, kindFor(c, ours)]).toEqual([c.legacy.status, 'error']);
      return;
    }
    const page = ours.body;
    expect(page.includes('<h3>SOAP 1.1</h3>')).toBe(has(config, 'HttpSoap'));
    expect(page.includes('<h3>SOAP 1.2</h3>')).toBe(has(config, 'HttpSoap12'));
    expect(page.includes('<h3>HTTP GET</h3>')).toBe(has(config, 'HttpGet'));
    // A local caller (see above): HttpPostLocalhost shows it HTTP POST; without any POST it is told the
    // help generator's text for a local caller (a remote one's is in test/localhost.test.ts).
    const post = has(config, 'HttpPost') || has(config, 'HttpPostLocalhost');
    expect(page.includes('<h3>HTTP POST</h3>')).toBe(post);
    expect(page.includes('<form')).toBe(post);
    expect(page.includes('The test form is only available for methods with primitive types as parameters.')).toBe(!post);
  });
});
