import fs from 'node:fs';
import path from 'node:path';
import type http from 'node:http';
import request from 'supertest';
import { FIXTURES } from './app';
import { findElement, parseXml } from './xml';

/**
 * The exchanges recorded from the legacy host (test/fixtures/exchanges), and the one way they are
 * checked: `response` exchanges must match status, media type and body by XML meaning; `expect`
 * exchanges (where the recording host's wording is not .NET's) must match status, media type, fault
 * code and the start of the text.
 */
export interface Exchange {
  id: string;
  request: { method: string; path: string; headers: Record<string, string>; body?: string };
  response?: { status: number; headers: Record<string, string>; body: string };
  expect?: { status: number; contentType?: string; text?: string; fault?: { code: string; text: string } };
}

const dir = path.join(FIXTURES, 'exchanges');
export const EXCHANGES: Exchange[] = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as Exchange);

export const HOST = 'legacy.example:8080';

/** Puts the exchange's request to `app`, its path under `prefix` (a base path or mount path). */
export function sendExchange(app: http.RequestListener | Express.Application, x: Exchange, prefix = '') {
  const agent = request(app as http.RequestListener);
  const url = prefix + x.request.path;
  const r = x.request.method === 'GET' ? agent.get(url) : agent.post(url);
  r.set('Host', HOST);
  for (const [k, v] of Object.entries(x.request.headers)) r.set(k, v);

  if (x.request.method === 'POST') r.send(x.request.body ?? '');
  return r.buffer(true).parse((res, cb) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => cb(null, Buffer.concat(chunks).toString('utf8')));
  });
}

/** Checks an answer against the recording; `{base_url}` in recorded bodies stands for `baseUrl`. */
export function expectRecordedAnswer(res: request.Response, x: Exchange, baseUrl: string): void {
  const body = res.body as string;
  if (x.response) {
    expect(res.status).toBe(x.response.status);
    const wantType = x.response.headers['content-type'];
    if (wantType) expect(res.headers['content-type']).toBe(wantType);
    else expect(res.headers['content-type']).toBeUndefined();
    const want = x.response.body.split('{base_url}').join(baseUrl);
    if (want === '') expect(body).toBe('');
    else expect(parseXml(body)).toEqual(parseXml(want));
    expect(res.headers['transfer-encoding']).toBeUndefined();
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(body));
  } else {
    const e = x.expect!;
    expect(res.status).toBe(e.status);
    if (e.contentType) expect(res.headers['content-type']).toMatch(new RegExp(`^${e.contentType}`));
    if (e.text) expect(body.startsWith(e.text)).toBe(true);
    if (e.fault) {
      const doc = parseXml(body);
      const code = findElement(doc, 'faultcode') ?? findElement(doc, 'Value');
      const text = findElement(doc, 'faultstring') ?? findElement(doc, 'Text');
      expect(code?.text).toBe(e.fault.code);
      expect(text?.text.startsWith(e.fault.text)).toBe(true);
    }
  }
}
