import http from 'node:http';
import https from 'node:https';
import zlib from 'node:zlib';
import type { ShadowConfig } from '../config';
import { log } from '../ops/log';
import { findEndpoint } from '../services/contract';
import { ANSWER_HEADERS, type Answer, compareLive } from './compare';
import { countShadow, type Labels } from './metrics';
import type { Report } from './report';

/**
 * The copy of a request, sent to the other host after the client has been answered, and the two
 * answers compared. Bounded three ways, so that a slow or dead other host costs clients nothing: at
 * most `concurrency` copies in flight, at most `queue` waiting (beyond that a copy is dropped and
 * counted), and each copy given `timeoutMs` to be answered.
 */
export interface Copy {
  requestId: string;
  method: string;
  /** Path and query as the client sent them. */
  url: string;
  /** The request's headers as sent (raw name/value pairs), hop-by-hop ones already left out. */
  headers: string[];
  body: Buffer | null;
  /** The answer the client got. */
  primary: Answer;
  /** The request as this service saw it; in legacy-first mode learnt from the copy's own exchange. */
  labels: Labels;
}

export interface MirrorTarget {
  /** Where the copy goes: the legacy site root (service-first) or this service on loopback (legacy-first). */
  url: URL;
  /** Which side the client's answer came from. */
  primary: 'ours' | 'legacy';
  /** The copy's path from the client's (a virtual directory moved). */
  path(url: string): string;
  /** Whether the copy keeps the client's Host header (else the target's own). */
  keepHost: boolean;
}

/** Headers that belong to one connection, never forwarded (RFC 9110 7.6.1), and those recomputed for a copy. */
export const HOP_BY_HOP: readonly string[] = ['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'expect'];

/** A message's raw headers (name, value, name, value...) without those named in `drop` (lower case). */
export function forwardable(raw: readonly string[], drop: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) if (!drop.includes(raw[i].toLowerCase())) out.push(raw[i], raw[i + 1]);
  return out;
}

/** Whether a request may be copied at all: to a service endpoint, and never to an operation with effects unless included. */
export function mayCopy(method: string, url: string, basePath: string, include: ReadonlySet<string>): boolean {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  if (path.length < basePath.length || path.slice(0, basePath.length).toLowerCase() !== basePath.toLowerCase()) return false;
  const m = /^\/([^/]+)\.asmx(\/.*)?$/i.exec(path.slice(basePath.length));
  const endpoint = m === null ? undefined : findEndpoint(m[1]);
  if (endpoint === undefined) return false;
  if (endpoint.operations.every((o) => o.effects !== true || include.has(o.name))) return true;
  // Any POST, or any /X.asmx/Op, might run the operation: only the service pages are copied.
  return m![2] === undefined && (method === 'GET' || method === 'HEAD');
}

export class Mirror {
  private readonly waiting: Copy[] = [];
  private active = 0;
  private readonly agent: http.Agent;
  /** Copies in flight in legacy-first mode, and what this service's hooks learnt of each. */
  private readonly learnt = new Map<string, Labels | null>();

  constructor(
    private readonly target: MirrorTarget,
    private readonly settings: Pick<ShadowConfig, 'concurrency' | 'queue' | 'timeoutMs'>,
    private readonly report: Report,
    private readonly mode: string,
  ) {
    const Agent = target.url.protocol === 'https:' ? https.Agent : http.Agent;
    this.agent = new Agent({ keepAlive: true, maxSockets: settings.concurrency });
  }

  /** Takes a copy to send when a slot is free, or drops it (counted) when too many are waiting. */
  offer(copy: Copy): void {
    if (this.active < this.settings.concurrency) return void this.run(copy);
    if (this.waiting.length >= this.settings.queue) return countShadow(copy.labels, 'dropped');
    this.waiting.push(copy);
  }

  /** Legacy-first: this service's hooks say what a copy was (endpoint, operation, binding). */
  learn(requestId: string, labels: Labels): void {
    if (this.learnt.has(requestId)) this.learnt.set(requestId, labels);
  }

  close(): void {
    this.waiting.length = 0;
    this.agent.destroy();
  }

  private async run(copy: Copy): Promise<void> {
    this.active++;
    try {
      if (this.target.primary === 'legacy') this.learnt.set(copy.requestId, null);
      const answer = await this.send(copy);
      const labels = this.learnt.get(copy.requestId) ?? copy.labels;
      this.settle(copy, labels, answer);
    } catch (error) {
      // A fault in the comparison must not end the process that serves clients.
      log.error('shadow copy not compared', { reqId: copy.requestId, error });
    } finally {
      this.learnt.delete(copy.requestId);
      this.active--;
      const next = this.waiting.shift();
      if (next !== undefined) void this.run(next);
    }
  }

  private settle(copy: Copy, labels: Labels, answer: Answer): void {
    const [legacy, ours] = this.target.primary === 'ours' ? [answer, copy.primary] : [copy.primary, answer];
    if (answer.error !== undefined) return countShadow(labels, this.target.primary === 'ours' ? 'legacy_error' : 'service_error');
    const differences = compareLive(copy.method, copy.url, legacy, ours);
    if (differences.length === 0) return countShadow(labels, 'match');
    countShadow(labels, 'difference');
    const header = (name: string) => {
      const i = copy.headers.findIndex((h, n) => n % 2 === 0 && h.toLowerCase() === name);
      return i === -1 ? [] : [[name, copy.headers[i + 1]]];
    };
    this.report.write({
      time: new Date().toISOString(),
      requestId: copy.requestId,
      mode: this.mode,
      endpoint: labels.endpoint ?? '',
      operation: labels.operation ?? '',
      binding: labels.binding ?? '',
      request: {
        method: copy.method,
        url: copy.url,
        headers: Object.fromEntries([...header('content-type'), ...header('soapaction'), ...header('content-encoding')]),
        body: copy.body === null ? '' : readable(copy.body, header('content-encoding')[0]?.[1]),
      },
      legacy,
      ours,
      differences,
    });
  }

  /** One copy, answered or not within the time-out; never rejects. */
  private send(copy: Copy): Promise<Answer> {
    const { url } = this.target;
    const headers = [...copy.headers, 'X-Request-Id', copy.requestId];
    // Framed by length always (node would chunk a bodiless PUT, and a host may answer that differently).
    if (copy.body !== null || (copy.method !== 'GET' && copy.method !== 'HEAD')) headers.push('Content-Length', String(copy.body?.length ?? 0));
    if (!this.target.keepHost) headers.push('Host', url.host);
    return new Promise((resolve) => {
      const fail = (error: Error) => resolve({ status: 0, headers: {}, body: '', error: error.message });
      const request = (url.protocol === 'https:' ? https : http).request(
        { hostname: url.hostname, port: url.port, method: copy.method, path: this.target.path(copy.url), headers, agent: this.agent, setHost: false },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', fail);
          res.on('end', () => {
            clearTimeout(timer);
            const h: Record<string, string | undefined> = {};
            for (const k of ANSWER_HEADERS) h[k] = res.headers[k] as string | undefined;
            resolve({ status: res.statusCode ?? 0, headers: h, body: readable(Buffer.concat(chunks), res.headers['content-encoding']) });
          });
        },
      );
      const timer = setTimeout(() => request.destroy(new Error(`no answer within ${this.settings.timeoutMs} ms`)), this.settings.timeoutMs);
      request.on('error', (e) => {
        clearTimeout(timer);
        fail(e);
      });
      request.end(copy.body ?? undefined);
    });
  }
}

/** Inflated no further than this: a body is read for a comparison, and a hostile one must not cost more. */
const INFLATE_LIMIT = 16 * 1024 * 1024;

/** A body as text, undoing a content coding first (a legacy host may compress what its client accepts). */
export function readable(body: Buffer, encoding: string | undefined): string {
  try {
    switch (encoding?.trim().toLowerCase()) {
      case 'gzip':
      case 'x-gzip':
        return zlib.gunzipSync(body, { maxOutputLength: INFLATE_LIMIT }).toString('utf8');
      case 'deflate':
        return zlib.inflateSync(body, { maxOutputLength: INFLATE_LIMIT }).toString('utf8');
      case 'br':
        return zlib.brotliDecompressSync(body, { maxOutputLength: INFLATE_LIMIT }).toString('utf8');
      default:
        return body.toString('utf8');
    }
  } catch {
    return body.toString('utf8');
  }
}
