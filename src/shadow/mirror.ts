import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { log } from '../ops/log';
import { findEndpoint } from '../services/contract';
import type { Answer } from './compare';
import { COPIER_MARK, type CopyJob, type CopyResult, type CopyTarget, readable } from './copier';
import { countShadow, type Labels } from './metrics';
import type { Report } from './report';

/**
 * The copy of a request, offered once the client has been answered; the two answers compared (in
 * the copier's thread, copier.ts) and the outcome counted and reported here. Bounded, so that a slow
 * or dead target costs clients nothing: at most `concurrency` copies in flight and `queue` waiting;
 * beyond that a copy is dropped and counted; each copy has `timeoutMs` to be answered.
 */
export interface Copy {
  requestId: string;
  method: string;
  /** Path and query as the client sent them. */
  url: string;
  /** The request's headers as sent (raw name/value pairs), those not to be copied left out. */
  headers: string[];
  body: Buffer | null;
  /** The answer the client got. */
  primary: Answer;
  /** The request as this service saw it; in legacy-first mode learnt from the copy's own exchange. */
  labels: Labels;
}

/** Headers that belong to one connection, never forwarded (RFC 9110 7.6.1), and Expect, already answered. */
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
  const p = q === -1 ? url : url.slice(0, q);
  if (p.length < basePath.length || p.slice(0, basePath.length).toLowerCase() !== basePath.toLowerCase()) return false;
  const m = /^\/([^/]+)\.asmx(\/.*)?$/i.exec(p.slice(basePath.length));
  const endpoint = m === null ? undefined : findEndpoint(m[1]);
  if (endpoint === undefined) return false;
  if (endpoint.operations.every((o) => o.effects !== true || include.has(o.name))) return true;
  // Any POST, or any /X.asmx/Op, might run the operation: only the service pages are copied.
  return m![2] === undefined && (method === 'GET' || method === 'HEAD');
}

/**
 * Run from the sources (the tests), the copier's thread compiles its TypeScript as it loads it, with
 * the typescript package the tests already have; the build runs copier.js as it is.
 */
function fromSource(entry: string): string {
  return `
    const fs = require('fs');
    const ts = require(require.resolve('typescript', { paths: [${JSON.stringify(path.dirname(entry))}] }));
    require.extensions['.ts'] = (m, file) => m._compile(ts.transpileModule(fs.readFileSync(file, 'utf8'), {
      fileName: file, compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
    }).outputText, file);
    require(${JSON.stringify(entry)});`;
}

export class Mirror {
  /** Copies handed to the copier and not yet settled, by a key of our own (clients may repeat request ids). */
  private readonly pending = new Map<number, Copy>();
  private next = 0;
  private worker: Worker | null = null;
  /** Legacy-first: what this service's hooks learnt of each copy in flight (endpoint, operation, binding). */
  private readonly learnt = new Map<string, Labels | null>();

  constructor(
    private readonly target: CopyTarget,
    private readonly queue: number,
    private readonly report: Report,
    private readonly mode: string,
  ) {}

  /** Hands a copy to the copier, or drops it (counted) when too many are in flight or waiting. */
  offer(copy: Copy): void {
    if (this.pending.size >= this.target.concurrency + this.queue) return countShadow(copy.labels, 'dropped');
    const key = ++this.next;
    this.pending.set(key, copy);
    if (this.target.primary === 'legacy') this.learnt.set(copy.requestId, null);
    const job: CopyJob = { key, requestId: copy.requestId, method: copy.method, url: copy.url, headers: copy.headers, body: copy.body, primary: copy.primary };
    this.copier().postMessage(job);
  }

  /** Legacy-first: this service's hooks say what a copy was. */
  learn(requestId: string, labels: Labels): void {
    if (this.learnt.has(requestId)) this.learnt.set(requestId, { endpoint: labels.endpoint, operation: labels.operation, binding: labels.binding });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    this.pending.clear();
    this.learnt.clear();
    await worker?.terminate();
  }

  private copier(): Worker {
    if (this.worker !== null) return this.worker;
    const entry = path.join(__dirname, `copier${path.extname(__filename)}`);
    const source = entry.endsWith('.ts');
    const worker = new Worker(source ? fromSource(entry) : entry, { eval: source, workerData: { [COPIER_MARK]: this.target } });
    // Copies never keep the process alive.
    worker.unref();
    worker.on('message', (result: CopyResult) => this.settle(result));
    worker.on('error', (error) => log.error('shadow copier failed', { error }));
    worker.on('exit', () => {
      if (this.worker !== worker) return;
      // Its copies are lost; the next offer starts another.
      this.worker = null;
      for (const copy of this.pending.values()) countShadow(copy.labels, 'dropped');
      this.pending.clear();
      this.learnt.clear();
    });
    this.worker = worker;
    return worker;
  }

  private settle(result: CopyResult): void {
    const copy = this.pending.get(result.key);
    if (copy === undefined) return;
    this.pending.delete(result.key);
    const labels = this.learnt.get(copy.requestId) ?? copy.labels;
    this.learnt.delete(copy.requestId);
    if (result.answer.error !== undefined) return countShadow(labels, this.target.primary === 'ours' ? 'legacy_error' : 'service_error');
    if (result.differences.length === 0) return countShadow(labels, 'match');
    countShadow(labels, 'difference');
    const [legacy, ours] = this.target.primary === 'ours' ? [result.answer, copy.primary] : [copy.primary, result.answer];
    const header = (name: string): Array<[string, string]> => {
      const i = copy.headers.findIndex((h, n) => n % 2 === 0 && h.toLowerCase() === name);
      return i === -1 ? [] : [[name, copy.headers[i + 1]]];
    };
    const encoding = header('content-encoding');
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
        headers: Object.fromEntries([...header('content-type'), ...header('soapaction'), ...encoding]),
        body: copy.body === null ? '' : readable(copy.body, encoding[0]?.[1]),
      },
      legacy,
      ours,
      differences: result.differences,
    });
  }
}
