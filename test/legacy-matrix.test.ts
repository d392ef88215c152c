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
 * Each request is asked as the legacy host was asked: from this machine, `Host: 127.0.0.1:PORT`. The
 * legacy host reports its caller as 10.1.2.3 (AsmxHost.cs), but .NET's HttpPostLocalhost and help page
 * count a request whose URL's host is loopback as local all the same (HttpPostLocalhostServerProtocol.cs:
 * `request.Url.IsLoopback || request.IsLocal`), so the recorded answers are those to a local caller,
 * which is what ours sees.
 */

const requestsOf = (cases: Recorded[]) => cases.map(({ legacy: _legacy, ...request }) => request);
const faultCode = (body: string) => /<(?:faultcode|soap:Value)>([^<]*)</.exec(body)?.[1];

test('every configuration has its recording, and nothing else is recorded', () => {
  const fs = jest.requireActual<typeof import('fs')>('fs');
  const { RECORDINGS } = jest.requireActual<typeof import('../scripts/legacy/recording')>('../scripts/legacy/recording');
  expect(fs.readdirSync(RECORDINGS).sort()).toEqual(MATRIX.map((c) => `${c.name}.json`).sort());
});

describe.each(MATRIX.map((c) => [c.name, c] as const))('%s', (_name, config) => {
  const recording = readRecording(config.name);
  const served = listening(envOf(config));
  const base = () => `${served.base}${config.virtualDir}`;

  test('the recording was made under this configuration and holds the corpus, case for case', () => {
    expect(recording.configuration).toEqual(config);
    expect(requestsOf(recording.cases)).toEqual(casesOf(config));
  });

  const checked = recording.cases.filter((c) => accepted(config, c.name) === undefined);
  test.each(checked.map((c) => [c.name, c] as const))('%s agrees with the legacy host', async (_case, c) => {
    const ours = comparable(await ask(base(), c, false), base(), c.path);
    expect(compareAnswers(kindFor(c, c.legacy), c.legacy, ours)).toEqual([]);
  });

  test('malformed requests among the accepted differences still get the legacy status and fault code', async () => {
    for (const c of recording.cases.filter((x) => accepted(config, x.name) !== undefined && x.name.includes('/malformed-'))) {
      const ours = await ask(base(), c, false);
      expect([c.name, ours.status, faultCode(ours.body)]).toEqual([c.name, c.legacy.status, faultCode(c.legacy.body)]);
      expect(ours.body).not.toMatch(/node_modules|\bat \w+ \(|\/src\//);
    }
  });

  test('the help page offers only the enabled protocols', async () => {
    const c = recording.cases.find((x) => /^(pages|protocols)\/PushNotificationMobile\/help-op(-GetTokenDevice)?$/.test(x.name))!;
    const ours = await ask(base(), c, false);
    if (!has(config, 'Documentation')) {
      expect([ours.status, kindFor(c, ours)]).toEqual([c.legacy.status, 'error']);
      return;
    }
    const page = ours.body;
    expect(page.includes('<h3>SOAP 1.1</h3>')).toBe(has(config, 'HttpSoap'));
    expect(page.includes('<h3>SOAP 1.2</h3>')).toBe(has(config, 'HttpSoap12'));
    expect(page.includes('<h3>HTTP GET</h3>')).toBe(has(config, 'HttpGet'));
    // A local caller: HttpPostLocalhost serves it as HttpPost would.
    const post = has(config, 'HttpPost') || has(config, 'HttpPostLocalhost');
    expect(page.includes('<h3>HTTP POST</h3>')).toBe(post);
    expect(page.includes('<form')).toBe(post);
    expect(page.includes('The test form is only available for methods with primitive types as parameters.')).toBe(!post);
  });
});
