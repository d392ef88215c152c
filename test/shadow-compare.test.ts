import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import type { Case } from '../scripts/legacy/ask';
import { type Answer, compareLive } from '../src/shadow/compare';
import { compareSent, ReadAgainst, readable } from '../src/shadow/sent';
import { AnswerReader } from '../src/shadow/answer';
import type { SentAnswer } from '../src/shadow/frames';
import { FIXTURES } from './helpers/app';

/**
 * The copier's comparison (compareSent) decides equal bytes without reading them and compares
 * anything else by meaning. Its verdict must be the comparison's by meaning (compareLive on both
 * answers as text) for every pair: the fast path may only ever say "match" where reading both would
 * have, and what differs is reported the same either way. Checked on the recorded legacy answers, as
 * sent (text or bytes, compressed or not), paired with themselves, with forms the comparison ignores
 * (prefixes, namespace declarations, attribute order, white space between elements, another host in
 * the service's addresses, LF for CRLF in a legacy text) and with real differences.
 */

interface Recorded {
  cases: Array<Case & { legacy: Answer }>;
}
const corpus = (JSON.parse(fs.readFileSync(path.join(FIXTURES, 'legacy', 'root-tempuri-all.json'), 'utf8')) as Recorded).cases;

/** An answer as text, as the comparison by meaning reads it. */
const text = (a: SentAnswer): Answer => ({
  status: a.status,
  headers: a.headers,
  body: typeof a.body === 'string' ? a.body : readable(a.body, a.encoding),
});

function expectSameVerdict(c: Case, legacy: SentAnswer, ours: SentAnswer): 'match' | 'difference' {
  const byMeaning = compareLive(c.method, c.path, text(legacy), text(ours));
  const sent = compareSent(c.method, c.path, legacy, ours);
  expect(sent?.found ?? []).toEqual(byMeaning);
  return byMeaning.length === 0 ? 'match' : 'difference';
}

const sent = (a: Answer): SentAnswer => ({ status: a.status, headers: a.headers, body: a.body });
const asBytes = (a: SentAnswer): SentAnswer => ({ ...a, body: Buffer.from(a.body) });
const gzipped = (a: SentAnswer): SentAnswer => ({ ...a, body: zlib.gzipSync(Buffer.from(a.body)), encoding: 'gzip' });
const withBody = (a: Answer, body: string): SentAnswer => ({ ...sent(a), body });

const xml = corpus.filter(
  (c) => /xml/.test(c.legacy.headers['content-type'] ?? '') && c.legacy.body.startsWith('<?xml') && c.legacy.status < 400,
);

test('an answer and its own bytes, as text, as bytes, compressed on one side: a match by either path', () => {
  expect(corpus.length).toBeGreaterThan(600);
  for (const c of corpus) {
    const a = sent(c.legacy);
    expect([
      expectSameVerdict(c, a, a),
      expectSameVerdict(c, a, asBytes(a)),
      expectSameVerdict(c, asBytes(a), a),
      expectSameVerdict(c, gzipped(a), a),
    ]).toEqual(['match', 'match', 'match', 'match']);
  }
});

test('bytes that differ only in what the comparison ignores: the fast path passes them on, and they match by meaning', () => {
  const forms: Array<[string, (body: string) => string]> = [
    // Other prefixes for the SOAP namespaces, declared where the old ones were.
    ['prefix', (b) => b.replace(/<(\/?)soap(12)?:/g, '<$1env$2:').replace(/xmlns:soap(12)?=/g, 'xmlns:env$1=')],
    // White space between elements, as an indenting writer leaves it.
    ['indentation', (b) => b.replace(/></g, '>\r\n  <')],
    // Namespace declarations in another order (attribute order does not count either).
    ['declaration order', (b) => b.replace(/<(\w+:Envelope) (xmlns:\w+="[^"]*") (xmlns:\w+="[^"]*") (xmlns:\w+="[^"]*")/, '<$1 $4 $2 $3')],
  ];
  let compared = 0;
  // Every second XML answer: the forms are the same for all, and each is parsed twice.
  for (const c of xml.filter((_c, i) => i % 2 === 0)) {
    for (const [name, change] of forms) {
      const changed = change(c.legacy.body);
      if (changed === c.legacy.body) continue;
      compared++;
      expect([name, c.name, expectSameVerdict(c, withBody(c.legacy, changed), sent(c.legacy))]).toEqual([name, c.name, 'match']);
      expect([name, c.name, expectSameVerdict(c, asBytes(withBody(c.legacy, changed)), asBytes(sent(c.legacy)))]).toEqual([
        name,
        c.name,
        'match',
      ]);
    }
  }
  expect(compared).toBeGreaterThan(250);

  // The service's addresses under another host (a WSDL from the legacy host's name and from ours).
  const wsdl = corpus.filter((c) => /\?wsdl$/i.test(c.path) && c.legacy.status === 200);
  expect(wsdl.length).toBeGreaterThan(0);
  for (const c of wsdl) {
    // Recorded with its addresses made placeholders: each host writes its own name there.
    const at = (host: string) => c.legacy.body.split('{BASE_URL}{PATH}').join(`${host}${c.path.replace(/\?.*$/, '')}`);
    expect(at('http://iis-host')).not.toBe(c.legacy.body);
    expect(expectSameVerdict(c, withBody(c.legacy, at('http://iis-host')), asBytes(withBody(c.legacy, at('http://new-host:8080'))))).toBe(
      'match',
    );
    expect(expectSameVerdict(c, withBody(c.legacy, at('http://iis-host')), withBody(c.legacy, at('http://iis-host/other')))).toBe(
      'difference',
    );
  }

  // A legacy plain-text error written with LF where .NET writes CRLF.
  const plain = corpus.filter((c) => /^text\/plain/.test(c.legacy.headers['content-type'] ?? '') && c.legacy.body.includes('\n'));
  expect(plain.length).toBeGreaterThan(0);
  for (const c of plain) {
    const [lf, crlf] = [c.legacy.body.replace(/\r\n/g, '\n'), c.legacy.body.replace(/\r?\n/g, '\r\n')];
    expect(expectSameVerdict(c, withBody(c.legacy, lf), asBytes(withBody(c.legacy, crlf)))).toBe('match');
  }
});

test('real differences are reported alike by both paths: a changed text, status, media type, Cache-Control or framing', () => {
  const changes: Array<[string, (a: Answer) => SentAnswer]> = [
    [
      'text',
      (a) =>
        withBody(
          a,
          a.body.replace(/>([^<>]+)</, (_m, t: string) => `>${t}x<`),
        ),
    ],
    ['status', (a) => ({ ...sent(a), status: a.status === 200 ? 500 : 200 })],
    ['media type', (a) => ({ ...sent(a), headers: { ...a.headers, 'content-type': 'text/html; charset=utf-8' } })],
    ['cache-control', (a) => ({ ...sent(a), headers: { ...a.headers, 'cache-control': 'public' } })],
    ['framing', (a) => ({ ...sent(a), headers: { ...a.headers, 'content-length': undefined, 'transfer-encoding': 'chunked' } })],
  ];
  for (const c of xml.filter((_c, i) => i % 4 === 0)) {
    for (const [name, change] of changes) {
      const changed = change(c.legacy);
      if (name === 'text' && changed.body === c.legacy.body) continue;
      expect([name, c.name, expectSameVerdict(c, sent(c.legacy), asBytes(changed))]).toEqual([name, c.name, 'difference']);
    }
  }
});

/**
 * The copier reads the legacy answer against the client's as it comes off the connection (ReadAgainst):
 * equal bytes are passed over and nothing is kept; from the first byte that differs the answer is kept,
 * and compareSent then gives the verdict. Read in pieces of any size from a buffer reused by every
 * read (as the wire's), the verdict must be the comparison's by meaning, and what is kept the legacy
 * answer byte for byte.
 */
describe('an answer read against the other as it comes (ReadAgainst)', () => {
  const byMeaning = (legacy: SentAnswer, ours: SentAnswer) =>
    compareLive('POST', '/', text(legacy), text(ours)).length === 0 ? 'match' : 'difference';

  /** An answer as it goes out framed by its length, or in chunks: its headers then, and its bytes on the wire. */
  function onTheWire(a: SentAnswer, chunked: boolean): { sent: SentAnswer; bytes: Buffer } {
    const body = Buffer.from(a.body);
    const framing = chunked
      ? { 'transfer-encoding': 'chunked', 'content-length': undefined }
      : { 'content-length': String(body.length), 'transfer-encoding': undefined };
    const sent = { ...a, headers: { ...a.headers, ...framing } };
    const headers = Object.entries(sent.headers).filter(([, v]) => v !== undefined);
    if (a.encoding !== undefined) headers.push(['content-encoding', a.encoding]);
    const head = Buffer.from(`HTTP/1.1 ${a.status} X\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`, 'latin1');
    if (!chunked) return { sent, bytes: Buffer.concat([head, body]) };
    const half = Math.floor(body.length / 2);
    const chunk = (b: Buffer) => (b.length === 0 ? [] : [Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')]);
    return {
      sent,
      bytes: Buffer.concat([head, ...chunk(body.subarray(0, half)), ...chunk(body.subarray(half)), Buffer.from('0\r\n\r\n')]),
    };
  }

  /** Reads `legacy` off a pretend connection against `ours`, `size` bytes a read into one reused buffer. */
  function readAgainst(
    legacy: SentAnswer,
    ours: SentAnswer,
    size: number,
    chunked: boolean,
  ): { verdict: 'match' | 'difference'; expected: 'match' | 'difference'; read: ReadAgainst } {
    const read = new ReadAgainst({ ...ours, body: Buffer.from(ours.body) });
    const reader = new AnswerReader('POST', read);
    const { sent, bytes } = onTheWire(legacy, chunked);
    const expected = byMeaning(sent, ours);
    const buffer = Buffer.alloc(size);
    let ended = false;
    for (let at = 0; at < bytes.length && !ended; at += size) {
      const n = bytes.copy(buffer, 0, at, at + size);
      ended = reader.push(buffer.subarray(0, n));
      buffer.fill(0);
    }
    expect(ended).toBe(true);
    if (read.equal) return { verdict: 'match', expected, read };
    // Kept whole: the legacy answer, byte for byte, whatever was passed over before it differed.
    expect(Buffer.from(read.answer.body).equals(Buffer.from(legacy.body))).toBe(true);
    return { verdict: compareSent('POST', '/', read.answer, ours) === null ? 'match' : 'difference', expected, read };
  }

  test('equal answers are equal with nothing kept; answers that differ anywhere (head, start, middle, end, length) are kept whole and judged by meaning', () => {
    let pairs = 0;
    for (const c of xml.filter((_, i) => i % 7 === 0)) {
      const a = asBytes(sent(c.legacy));
      const body = String(c.legacy.body);
      const variants: SentAnswer[] = [
        a,
        { ...a, status: a.status + 1 },
        { ...a, headers: { ...a.headers, 'cache-control': 'no-cache' } },
        withBody(c.legacy, `X${body.slice(1)}`),
        withBody(c.legacy, body.replace(/>([^<]+)</, '>$1 changed<')),
        withBody(c.legacy, `${body.slice(0, -1)}X`),
        withBody(c.legacy, body.slice(0, -5)),
        withBody(c.legacy, `${body}<!-- more -->`),
        withBody(c.legacy, body.replace(/></g, '>\r\n<')),
      ];
      for (const legacy of variants) {
        for (const [size, chunked] of [
          [7, false],
          [1000, true],
          [65536, false],
        ] as const) {
          const { verdict, expected } = readAgainst(asBytes(legacy), a, size, chunked);
          expect(verdict).toBe(expected);
          pairs++;
        }
      }
      const framed = onTheWire(a, false).sent;
      expect(readAgainst(framed, framed, 7, false).read.equal).toBe(true);
    }
    expect(pairs).toBeGreaterThan(300);
  });
});

// Mono quotes a refused value its own way (src/shadow/mono-quote.ts); .NET's quote of the same value agrees with it.
test("request validation's refusal: Mono's quote of a value and .NET's agree, anything else differs", () => {
  const refusal = (quoted: string, lf = false, collection = 'QueryString') => ({
    status: 500,
    headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'private', 'content-length': '1' },
    body: `A potentially dangerous Request.${collection} value was detected from the client (${quoted}).${lf ? '\n' : '\r\n'}`,
  });
  const verdict = (mono: string, ours: string, collection?: string) =>
    compareLive('GET', '/PushNotificationMobile.asmx/GetTokenDevice?id=x', refusal(mono, true), refusal(ours, false, collection)).length ===
    0;
  const agree: Array<[string, string]> = [
    // a 60 KB value: Mono's first 15 characters, .NET's 20 after the dangerous place
    ['id=&quot;&lt;img src=x oner...&quot;', 'id=&quot;&lt;img src=x onerror=a...&quot;'],
    // whole in Mono's, cut at the start in .NET's
    ['id=&quot;abcdefghijk&lt;b01234&quot;', 'id=&quot;...bcdefghijk&lt;b01234&quot;'],
    // NULs: Mono quotes them, .NET removes them first
    ['id=&quot;&lt;\0b&quot;', 'id=&quot;&lt;b&quot;'],
    // the dangerous place further in than Mono's 15 characters
    [`id=&quot;${'a'.repeat(15)}...&quot;`, `id=&quot;...${'a'.repeat(10)}&lt;b${'z'.repeat(18)}...&quot;`],
    // Mono's cut through a surrogate pair, read as U+FFFD; a whole pair before the cut, each half one
    ['id=&quot;&lt;bcdefghijklmn\ufffd...&quot;', 'id=&quot;&lt;bcdefghijklmn😀xyz&quot;'],
    ['id=&quot;&lt;/&amp;#x41;\ufffd\ufffd&amp;amp;...&quot;', 'id=&quot;&lt;/&amp;#x41;🏫&amp;amp;&amp;#x41...&quot;'],
    ['id=&quot;&lt;b\ufffd\ufffdc&quot;', 'id=&quot;&lt;b🏫c&quot;'],
    ['id=&quot;&#233;&#233;&lt;bcdefghijklm...&quot;', 'id=&quot;&#233;&#233;&lt;bcdefghijklmnopqrst...&quot;'],
    // a line feed in the value: Mono writes it as sent, as .NET does (only the message's own line end is LF for CRLF)
    ['id=&quot;a\n&lt;b&quot;', 'id=&quot;a\n&lt;b&quot;'],
    ['id=&quot;&lt;b\n\n12345678901...&quot;', 'id=&quot;&lt;b\n\n1234567890123456&quot;'],
  ];
  for (const [mono, ours] of agree) expect([mono, verdict(mono, ours)]).toEqual([mono, true]);
  const differ: Array<[string, string, string?]> = [
    ['a=&quot;&lt;b&quot;', 'id=&quot;&lt;b&quot;'],
    ['id=&quot;&lt;b&quot;', 'id=&quot;&lt;b&quot;', 'Form'],
    ['id=&quot;x&lt;b&quot;', 'id=&quot;&lt;b&quot;'],
    ['id=&quot;&lt;img src=x oner...&quot;', 'id=&quot;&lt;img src=y onerror=a...&quot;'],
    ['id=&quot;&lt;b0123456789012...&quot;', 'id=&quot;&lt;b012345678901X...&quot;'],
    // ours repeating the value whole, or cutting it elsewhere than .NET does
    ['id=&quot;&lt;b0123456789012...&quot;', `id=&quot;&lt;b${'0123456789'.repeat(10)}&quot;`],
    ['id=&quot;&lt;b0123456789012...&quot;', 'id=&quot;&lt;b0123456789012345678901&quot;'],
    [`id=&quot;${'a'.repeat(15)}...&quot;`, `id=&quot;...${'a'.repeat(9)}&lt;b${'z'.repeat(18)}...&quot;`],
  ];
  for (const [mono, ours, collection] of differ) expect([ours, verdict(mono, ours, collection)]).toEqual([ours, false]);
});

// A raw `#fragment` is no part of the request the server reads: `GET /X.asmx#x` is the help page, compared as one.
test('a service page asked with a raw fragment is compared as the page without it', () => {
  const help = corpus.find((c) => c.kind === 'help' && c.method === 'GET' && /^\/\w+\.asmx$/.test(c.path) && c.legacy.status === 200)!;
  // the hosts' help pages are their own designs: ours has another body and says its charset
  const ours: Answer = {
    ...help.legacy,
    headers: { ...help.legacy.headers, 'content-type': 'text/html; charset=utf-8' },
    body: '<html>ours</html>',
  };
  for (const fragment of ['#', '#x', '#wsdl'])
    expect([fragment, compareLive('GET', help.path + fragment, help.legacy, ours)]).toEqual([fragment, []]);
  // a WSDL asked with a fragment is still a WSDL, compared in full
  const wsdl = corpus.find((c) => /\?wsdl$/i.test(c.path) && c.legacy.status === 200)!;
  expect(
    compareLive('GET', `${wsdl.path}#x`, wsdl.legacy, { ...wsdl.legacy, body: wsdl.legacy.body.replace('definitions', 'definitionz') }),
  ).not.toEqual([]);
});
