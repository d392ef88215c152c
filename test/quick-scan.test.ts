import fs from 'node:fs';
import path from 'node:path';
import { Rng } from '../scripts/fuzz/mutate';
import { WORKLOADS } from '../scripts/bench/workloads';
import { quickScan } from '../src/bindings/soap/quick-scan';
import { type OperationPlan, type ReadPlan, scanEnvelope, type XmlLimits } from '../src/bindings/soap/scan';
import { charFromSoapCode } from '../src/contract/char';
import { ENDPOINTS } from '../src/contract/operations';
import { FIXTURES } from './helpers/app';

/**
 * The quick reader (src/bindings/soap/quick-scan.ts) either gives up or gives exactly what sax's
 * reading gives: the same envelope, Body element, parameters (text, nil, markup, the index after
 * each) and mustUnderstand header, so every answer that follows is the one the general path gives.
 * Held over every SOAP body recorded from the legacy host (test/fixtures/legacy, exchanges), each of them mutated many times over, and
 * the cases written below; and it must not give up on the plain requests that make up most traffic.
 */

const LIMITS: XmlLimits = { maxDepth: 64, maxElements: 2048 };

/** Every operation of the contract, in whatever namespace its element is: so the parameters of every recorded body are read. */
function planFor(ns: string, local: string): OperationPlan | undefined {
  const op = ENDPOINTS.flatMap((e) => e.operations).find((o) => o.name === local);
  const check = (text: string) => {
    const converted = charFromSoapCode(text);
    return 'reasons' in converted ? converted.reasons : null;
  };
  return op && { ns, name: op.name, params: op.params.map((p) => (p.type === 'char' ? { name: p.name, check } : { name: p.name })) };
}
const ENVELOPES = new Set(['http://schemas.xmlsoap.org/soap/envelope/', 'http://www.w3.org/2003/05/soap-envelope']);
/** Routed by the Body's first element (SOAP 1.2 without an action). */
const BY_ELEMENT: ReadPlan = { envelopes: ENVELOPES, named: undefined, byElement: planFor };
/** Named before the envelope is read (a SOAPAction): GetStudentSchool, whose char parameter can fail. */
const NAMED: ReadPlan = { envelopes: ENVELOPES, named: planFor('http://tempuri.org/', 'GetStudentSchool'), byElement: planFor };

interface Recorded {
  method: string;
  headers?: Record<string, string>;
  body?: string;
  bodyBase64?: string;
}

function corpusBodies(): string[] {
  const bodies = new Set<string>();
  const legacy = path.join(FIXTURES, 'legacy');
  for (const file of fs.readdirSync(legacy).filter((f) => f.endsWith('.json'))) {
    const cases = (JSON.parse(fs.readFileSync(path.join(legacy, file), 'utf8')) as { cases: Recorded[] }).cases;
    for (const c of cases) {
      if (c.method !== 'POST') continue;
      if (c.body) bodies.add(c.body);
      if (c.bodyBase64) {
        const bytes = Buffer.from(c.bodyBase64, 'base64');
        bodies.add(bytes.toString('utf8'));
        bodies.add(bytes.toString('latin1'));
      }
    }
  }
  const exchanges = path.join(FIXTURES, 'exchanges');
  for (const file of fs.readdirSync(exchanges)) {
    const request = (JSON.parse(fs.readFileSync(path.join(exchanges, file), 'utf8')) as { request?: Recorded }).request;
    if (request?.method === 'POST' && request.body) bodies.add(request.body);
  }
  return [...bodies];
}

/** Both readers on one text: the quick one gives up or agrees. */
function agree(source: string, limits: XmlLimits = LIMITS, plan: ReadPlan = BY_ELEMENT): boolean {
  const quick = quickScan(source, limits, plan);
  if (quick !== null) expect({ source, outcome: quick }).toEqual({ source, outcome: scanEnvelope(source, limits, plan) });
  return quick !== null;
}

const PIECES = [
  '<',
  '>',
  '/',
  '"',
  "'",
  '&',
  '&amp;',
  ':',
  '=',
  ' ',
  '\n',
  '\r',
  '\t',
  'x',
  '!',
  '?',
  '-',
  '\u00e9',
  '\ufeff',
  '<!-- c -->',
  '<![CDATA[z]]>',
  'xmlns',
  'xmlns:p="u"',
  'p:',
  '</a>',
  '<b/>',
  'xsi:nil="true"',
  '\u0000',
];

function mutated(source: string, rng: Rng): string {
  let s = source;
  for (let k = 1 + rng.int(3); k > 0; k--) {
    const at = rng.int(s.length + 1);
    switch (rng.int(5)) {
      case 0:
        s = s.slice(0, at) + s.slice(at + 1 + rng.int(4));
        break;
      case 1:
        s = s.slice(0, at) + rng.pick(PIECES) + s.slice(at);
        break;
      case 2: {
        const from = rng.int(s.length);
        s = s.slice(0, at) + s.slice(from, from + 1 + rng.int(20)) + s.slice(at);
        break;
      }
      case 3:
        s = s.slice(0, at);
        break;
      default:
        s = s.slice(0, at) + rng.pick(PIECES) + s.slice(at + 1);
    }
  }
  return s;
}

test('every SOAP body of the recorded corpora: the quick reader gives up or agrees with sax', () => {
  const bodies = corpusBodies();
  expect(bodies.length).toBeGreaterThan(300);
  const taken = bodies.filter((b) => agree(b)).length;
  // Most recorded requests are plain; the rest are the odd ones the corpora exist for.
  expect(taken).toBeGreaterThan(bodies.length / 3);
});

test('each body mutated 40 times, and under tight limits: the quick reader gives up or agrees with sax', () => {
  const rng = new Rng(20261125);
  let taken = 0;
  let cases = 0;
  for (const body of corpusBodies()) {
    for (let k = 0; k < 40; k++) {
      cases++;
      if (agree(mutated(body, rng), LIMITS, k % 2 === 0 ? BY_ELEMENT : NAMED)) taken++;
    }
    agree(body, { maxDepth: 4, maxElements: 8 });
    agree(body, { maxDepth: 3, maxElements: 1000 });
  }
  // Mutations must leave a good share still plain, or the comparison would prove little.
  expect(taken).toBeGreaterThan(cases / 20);
});

test('the benchmark requests and the README examples are read by the quick reader', () => {
  for (const w of WORKLOADS) if (w.binding === 'soap11' || w.binding === 'soap12') expect(agree(w.request.body!)).toBe(true);
  const readme = fs.readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');
  const examples = [...readme.matchAll(/--data '(<\?xml[^']*)'/g)].map((m) => m[1]);
  expect(examples.length).toBeGreaterThan(0);
  for (const e of examples) expect(agree(e)).toBe(true);
});

const ENV = 'xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"';
const XSI = 'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"';
const wrap = (body: string, header = '') =>
  `<?xml version="1.0" encoding="utf-8"?><soap:Envelope ${ENV} ${XSI}>${header}<soap:Body>${body}</soap:Body></soap:Envelope>`;

test.each([
  [
    'parameters with white space, empty, self-closing, nil',
    wrap(
      '<GetStudentSchool xmlns="http://tempuri.org/"><school_base_url>  a b\n</school_base_url ><show_active/><x xsi:nil="true"/></GetStudentSchool>',
    ),
  ],
  ['a repeated parameter: the first counts', wrap('<GetTokenDevice xmlns="http://tempuri.org/"><id>a</id><id>b</id></GetTokenDevice>')],
  ['a parameter holding an element', wrap('<GetTokenDevice xmlns="http://tempuri.org/"><id>a<b>c</b>d</id></GetTokenDevice>')],
  [
    'a prefixed operation and parameters',
    wrap('<t:GetTokenDevice xmlns:t="http://tempuri.org/"><t:id>a</t:id><id>b</id></t:GetTokenDevice>'),
  ],
  ['the default namespace undeclared', wrap('<GetTokenDevice xmlns="http://tempuri.org/"><id xmlns="">a</id></GetTokenDevice>')],
  [
    'a prefix redeclared inside',
    wrap('<t:GetTokenDevice xmlns:t="http://tempuri.org/"><t:id xmlns:t="urn:other">a</t:id></t:GetTokenDevice>'),
  ],
  [
    'a mustUnderstand header',
    wrap(
      '<GetAboutUs xmlns="http://tempuri.org/"/>',
      '<soap:Header><h:Auth xmlns:h="urn:h" soap:mustUnderstand="1">x</h:Auth></soap:Header>',
    ),
  ],
  [
    'a header not to be understood',
    wrap('<GetAboutUs xmlns="http://tempuri.org/"/>', "<soap:Header><Auth xmlns='urn:h' soap:mustUnderstand='0'/></soap:Header>"),
  ],
  ['no Body', `<soap:Envelope ${ENV}><soap:Header/></soap:Envelope>`],
  ['an empty Body', `<soap:Envelope ${ENV}><soap:Body/></soap:Envelope>`],
  ['another root element', '<Envelope xmlns="urn:x"><Body><a/></Body></Envelope>'],
  [
    'text with markup characters sax passes on',
    wrap('<GetTokenDevice xmlns="http://tempuri.org/"><id>a>b]]>c\r\n\t</id></GetTokenDevice>'),
  ],
  [
    'single quotes and a standalone declaration',
    `<?xml version='1.0' encoding='utf-8' standalone='yes'?>\n<soap:Envelope xmlns:soap='http://schemas.xmlsoap.org/soap/envelope/'>\n <soap:Body>\n  <GetTokenDevice xmlns='http://tempuri.org/'><id>x</id></GetTokenDevice>\n </soap:Body>\n</soap:Envelope>\n`,
  ],
])('read by both, the same: %s', (_name, source) => {
  expect(agree(source)).toBe(true);
});

test.each([
  ['an entity', wrap('<GetTokenDevice xmlns="http://tempuri.org/"><id>a&amp;b</id></GetTokenDevice>')],
  ['a comment', wrap('<GetTokenDevice xmlns="http://tempuri.org/"><id>a<!-- x --></id></GetTokenDevice>')],
  ['CDATA', wrap('<GetTokenDevice xmlns="http://tempuri.org/"><id><![CDATA[a]]></id></GetTokenDevice>')],
  ['a DTD', `<!DOCTYPE x [<!ENTITY e "y">]>${wrap('<GetAboutUs xmlns="http://tempuri.org/"/>')}`],
  ['a byte-order mark', `\ufeff${wrap('<GetAboutUs xmlns="http://tempuri.org/"/>')}`],
  ['an undeclared prefix', wrap('<t:GetTokenDevice><id>a</id></t:GetTokenDevice>')],
  ['a name outside ASCII', wrap('<GetTokenDevice xmlns="http://tempuri.org/"><ïd>a</ïd></GetTokenDevice>')],
  ['white space around =', wrap('<GetTokenDevice xmlns = "http://tempuri.org/"><id>a</id></GetTokenDevice>')],
  ['a duplicate attribute', wrap('<GetTokenDevice xmlns="http://tempuri.org/" a="1" a="2"><id>a</id></GetTokenDevice>')],
  ['a mismatched end tag', wrap('<GetTokenDevice xmlns="http://tempuri.org/"><id>a</ID></GetTokenDevice>')],
  ['an unclosed element', wrap('<GetTokenDevice xmlns="http://tempuri.org/"><id>a</GetTokenDevice>')],
  ['two roots', `${wrap('<GetAboutUs xmlns="http://tempuri.org/"/>')}<x/>`],
  ['text after the root', `${wrap('<GetAboutUs xmlns="http://tempuri.org/"/>')}x`],
  ['another declaration', `<?xml version="1.1"?>${wrap('<GetAboutUs xmlns="http://tempuri.org/"/>')}`],
  ['a processing instruction', `<?xml version="1.0"?><?pi x?>${wrap('<GetAboutUs xmlns="http://tempuri.org/"/>')}`],
  ['nothing', '  \n'],
])('left to sax: %s', (_name, source) => {
  expect(quickScan(source, LIMITS, BY_ELEMENT)).toBeNull();
});

test('limits: past them the quick reader gives up, and sax refuses with its position', () => {
  const deep = wrap(`<GetTokenDevice xmlns="http://tempuri.org/"><x>${'<a>'.repeat(10)}${'</a>'.repeat(10)}</x></GetTokenDevice>`);
  expect(quickScan(deep, { maxDepth: 8, maxElements: 100 }, BY_ELEMENT)).toBeNull();
  expect(scanEnvelope(deep, { maxDepth: 8, maxElements: 100 }, BY_ELEMENT)).toMatchObject({
    ok: false,
    message: expect.stringMatching(/nested more than 8 elements deep\. Line 1, position \d+\./),
  });
  expect(agree(deep, { maxDepth: 16, maxElements: 100 })).toBe(true);
  expect(quickScan(deep, { maxDepth: 16, maxElements: 10 }, BY_ELEMENT)).toBeNull();
});
