/**
 * Records how a legacy ASMX host answers when its web.config leaves protocols out, for
 * test/fixtures/protocols.json (replayed by test/protocols.test.ts). Start one legacy host per
 * configuration, e.g.
 *
 *   PROTOCOLS=HttpSoap,HttpPost <legacy-host>/start.sh 9301 &    (the legacy host of the project's reference tools)
 *
 * then: npm run record-protocols -- 'HttpSoap,HttpPost=http://127.0.0.1:9301' ... [--out FILE]
 */
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../src/basics/paths';
import { ask, type Case } from './legacy/ask';
import { type Answer, placeholdBase } from '../src/shadow/compare';

const NS = 'http://tempuri.org/';
const CT11 = 'text/xml; charset=utf-8';
const CT12 = 'application/soap+xml; charset=utf-8';
const FORM = 'application/x-www-form-urlencoded';

function envelope(version: '1.1' | '1.2', op: string, params: string): string {
  const env = version === '1.1' ? 'http://schemas.xmlsoap.org/soap/envelope/' : 'http://www.w3.org/2003/05/soap-envelope';
  return `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${env}"><soap:Body><${op} xmlns="${NS}">${params}</${op}></soap:Body></soap:Envelope>`;
}

/** The same requests for every configuration: each binding, its routing variants, and the service pages. */
export function protocolCases(): Case[] {
  const cases: Case[] = [];
  const ops = [
    { endpoint: 'PushNotificationMobile', op: 'GetTokenDevice', soap: '<id>dev-1001</id>', form: 'id=dev-1001' },
    { endpoint: 'AboutUs', op: 'GetAboutUs', soap: '', form: '' },
  ];
  for (const { endpoint, op, soap, form } of ops) {
    const p = `/${endpoint}.asmx`;
    const name = (s: string) => `${endpoint}/${s}`;
    const action = `"${NS}${op}"`;
    cases.push(
      { name: name('soap11'), method: 'POST', path: p, headers: { 'Content-Type': CT11, SOAPAction: action }, body: envelope('1.1', op, soap), kind: 'full' },
      { name: name('soap11-no-soapaction'), method: 'POST', path: p, headers: { 'Content-Type': CT11 }, body: envelope('1.1', op, soap), kind: 'full' },
      { name: name('soap11-unknown-soapaction'), method: 'POST', path: p, headers: { 'Content-Type': CT11, SOAPAction: '"urn:nothing"' }, body: envelope('1.1', op, soap), kind: 'full' },
      { name: name('soap12'), method: 'POST', path: p, headers: { 'Content-Type': CT12 }, body: envelope('1.2', op, soap), kind: 'full' },
      { name: name('soap12-action'), method: 'POST', path: p, headers: { 'Content-Type': `${CT12}; action="${NS}${op}"` }, body: envelope('1.2', op, soap), kind: 'full' },
      { name: name('soap12-as-text-xml-with-soapaction'), method: 'POST', path: p, headers: { 'Content-Type': CT11, SOAPAction: action }, body: envelope('1.2', op, soap), kind: 'full' },
      { name: name('get'), method: 'GET', path: `${p}/${op}${form ? `?${form}` : ''}`, headers: {}, kind: 'full' },
      { name: name('get-unknown-op'), method: 'GET', path: `${p}/NoSuchOp`, headers: {}, kind: 'full' },
      { name: name('post'), method: 'POST', path: `${p}/${op}`, headers: { 'Content-Type': FORM }, body: form, kind: 'full' },
      { name: name('post-unknown-op'), method: 'POST', path: `${p}/NoSuchOp`, headers: { 'Content-Type': FORM }, body: '', kind: 'full' },
      { name: name('wsdl'), method: 'GET', path: `${p}?wsdl`, headers: {}, kind: 'page' },
      { name: name('WSDL-upper'), method: 'GET', path: `${p}?WSDL`, headers: {}, kind: 'page' },
      { name: name('disco'), method: 'GET', path: `${p}?disco`, headers: {}, kind: 'page' },
      { name: name('help'), method: 'GET', path: p, headers: {}, kind: 'help' },
      { name: name('help-op'), method: 'GET', path: `${p}?op=${op}`, headers: {}, kind: 'help' },
    );
  }
  return cases;
}

export interface ProtocolRecording {
  protocols: string;
  cases: (Case & { legacy: Answer })[];
}

async function main(argv: string[]): Promise<number> {
  const outAt = argv.indexOf('--out');
  const out = outAt >= 0 ? argv[outAt + 1]! : path.join(projectRoot, 'test', 'fixtures', 'protocols.json');
  const targets = argv.filter((a, i) => a.includes('=') && !(outAt >= 0 && i === outAt + 1));
  const recordings: ProtocolRecording[] = [];
  for (const target of targets) {
    const [protocols, base] = target.split('=') as [string, string];
    const cases = [];
    for (const c of protocolCases()) {
      const legacy = await ask(base, c, true);
      if (legacy.error) throw new Error(`${protocols} ${c.name}: ${legacy.error}`);
      if (c.kind === 'page') legacy.body = placeholdBase(legacy.body, base, c.path);
      cases.push({ ...c, legacy });
    }
    recordings.push({ protocols, cases });
    process.stdout.write(`${protocols}: ${cases.length} cases\n`);
  }
  fs.writeFileSync(out, JSON.stringify({ recordedFrom: 'legacy-host (Mono System.Web.Services) with web.config <protocols> as named', recordings }, null, 1) + '\n');
  return 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (e: unknown) => {
      process.stderr.write(`error: ${String(e)}\n`);
      process.exitCode = 1;
    },
  );
}
