import type http from 'node:http';
import request from 'supertest';
import { findElement, parseXml } from './xml';

export const ENV11 = 'http://schemas.xmlsoap.org/soap/envelope/';
export const ENV12 = 'http://www.w3.org/2003/05/soap-envelope';
export const NS = 'http://tempuri.org/';

/** A SOAP envelope of the given version around Body content. */
export function envelope(version: '1.1' | '1.2', body: string, header = ''): string {
  const ns = version === '1.1' ? ENV11 : ENV12;
  return (
    `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${ns}" ` +
    `xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema">` +
    `${header}<soap:Body>${body}</soap:Body></soap:Envelope>`
  );
}

/** `<Op xmlns="ns"><a>1</a>…</Op>` from a record of parameters (already escaped). */
export function opElement(op: string, params: Record<string, string> = {}, ns = NS): string {
  const inner = Object.entries(params)
    .map(([k, v]) => `<${k}>${v}</${k}>`)
    .join('');
  return `<${op} xmlns="${ns}">${inner}</${op}>`;
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string | undefined>;
  body: string;
}

/** POSTs a raw body with exactly the given headers and reads the answer as text. */
export async function post(app: http.RequestListener, path: string, headers: Record<string, string>, body: string): Promise<RawAnswer> {
  const r = request(app).post(path);
  for (const [k, v] of Object.entries(headers)) r.set(k, v);
  const res = await r
    .send(body)
    .buffer(true)
    .parse((resp, cb) => {
      const chunks: Buffer[] = [];
      resp.on('data', (c: Buffer) => chunks.push(c));
      resp.on('end', () => cb(null, Buffer.concat(chunks).toString('utf8')));
    });
  return { status: res.status, headers: res.headers as Record<string, string>, body: res.body as string };
}

export function soap11(app: http.RequestListener, path: string, action: string | null, body: string) {
  const headers: Record<string, string> = { 'Content-Type': 'text/xml; charset=utf-8' };
  if (action !== null) headers.SOAPAction = action;
  return post(app, path, headers, body);
}

export function soap12(app: http.RequestListener, path: string, body: string, action?: string) {
  const ct = `application/soap+xml; charset=utf-8${action === undefined ? '' : `; action="${action}"`}`;
  return post(app, path, { 'Content-Type': ct }, body);
}

/** The fault code and text of a fault answer of either version. */
export function faultOf(body: string): { code: string | undefined; text: string | undefined } {
  const doc = parseXml(body);
  return {
    code: (findElement(doc, 'faultcode') ?? findElement(doc, 'Value'))?.text,
    text: (findElement(doc, 'faultstring') ?? findElement(doc, 'Text'))?.text,
  };
}
