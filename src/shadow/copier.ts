import http from 'node:http';
import https from 'node:https';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import zlib from 'node:zlib';
import { ANSWER_HEADERS, type Answer, compareLive, type Difference } from './compare';

/**
 * The copies' own thread: it puts each copy to the target, at most `concurrency` at a time, and
 * compares the answer with the client's. Sending and comparing cost about as much CPU as answering,
 * so they run here and the event loop that answers clients only hands copies over and counts.
 */

/** Where the copies go, as plain data (it crosses to the worker). */
export interface CopyTarget {
  /** The target's origin, e.g. http://legacy-host:80 */
  origin: string;
  /** The copy's path is `prefix` + the client's path without its first `strip` characters (a virtual directory moved). */
  prefix: string;
  strip: number;
  /** Whether the copy keeps the client's Host header (else the target's own). */
  keepHost: boolean;
  /** Which answer is the legacy one: the client's (legacy-first) or the copy's (service-first). */
  primary: 'ours' | 'legacy';
  concurrency: number;
  timeoutMs: number;
}

/** What the copier needs of a copy. */
export interface CopyJob {
  /** The mirror's own key for it (clients may repeat request ids). */
  key: number;
  requestId: string;
  method: string;
  url: string;
  headers: string[];
  body: Uint8Array | null;
  primary: Answer;
}

export interface CopyResult {
  key: number;
  /** The copy's answer, and the differences when it came. */
  answer: Answer;
  differences: Difference[];
}

export class Copier {
  private readonly waiting: CopyJob[] = [];
  private active = 0;
  private readonly agent: http.Agent;

  constructor(
    private readonly target: CopyTarget,
    private readonly done: (result: CopyResult) => void,
  ) {
    const Agent = target.origin.startsWith('https:') ? https.Agent : http.Agent;
    this.agent = new Agent({ keepAlive: true, maxSockets: target.concurrency });
  }

  take(job: CopyJob): void {
    if (this.active >= this.target.concurrency) return void this.waiting.push(job);
    this.active++;
    void this.send(job).then((answer) => {
      const [legacy, ours] = this.target.primary === 'ours' ? [answer, job.primary] : [job.primary, answer];
      const differences = answer.error === undefined ? compareLive(job.method, job.url, legacy, ours) : [];
      this.done({ key: job.key, answer, differences });
      this.active--;
      const next = this.waiting.shift();
      if (next !== undefined) this.take(next);
    });
  }

  /** One copy, answered or not within the time-out; never rejects. */
  private send(job: CopyJob): Promise<Answer> {
    const url = new URL(this.target.origin);
    const headers = [...job.headers, 'X-Request-Id', job.requestId];
    // Framed by length always (node would chunk a bodiless PUT, and a host may answer that differently).
    if (job.body !== null || (job.method !== 'GET' && job.method !== 'HEAD')) headers.push('Content-Length', String(job.body?.length ?? 0));
    if (!this.target.keepHost) headers.push('Host', url.host);
    const path = this.target.prefix + job.url.slice(this.target.strip);
    return new Promise((resolve) => {
      const fail = (error: Error) => resolve({ status: 0, headers: {}, body: '', error: error.message });
      const request = (url.protocol === 'https:' ? https : http).request(
        { hostname: url.hostname, port: url.port, method: job.method, path, headers, agent: this.agent, setHost: false },
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
      const timer = setTimeout(() => request.destroy(new Error(`no answer within ${this.target.timeoutMs} ms`)), this.target.timeoutMs);
      request.on('error', (e) => {
        clearTimeout(timer);
        fail(e);
      });
      request.end(job.body ?? undefined);
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

/** Marks the worker's data, so that this module only starts a copier in the thread made for it. */
export const COPIER_MARK = 'shadowCopier';

if (!isMainThread && parentPort !== null && (workerData as Record<string, unknown> | null)?.[COPIER_MARK] !== undefined) {
  const port = parentPort;
  const copier = new Copier((workerData as Record<string, CopyTarget>)[COPIER_MARK], (result) => port.postMessage(result));
  port.on('message', (job: CopyJob) => copier.take(job));
}
