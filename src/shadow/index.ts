import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Exchange, Request, Response } from '../transport/types';
import type { Config, ShadowConfig } from '../config';
import type { RequestTap } from '../transport/exchange';
import { createServer } from '../transport/server';
import { ANSWER_HEADERS } from './compare';
import type { CopyTarget } from './copier';
import type { SentAnswer } from './frames';
import { createFront } from './front';
import { copyRule, forwardable, HOP_BY_HOP } from './copy-rule';
import { Mirror } from './mirror';
import type { ComparedSink } from './totals';
import type { Pen } from './log-file';
import { openReport, type Report } from './report';

/**
 * Shadow traffic, wired into the process: the request hooks' tap, what listens on the service's port,
 * and the mirror between them.
 *
 * - service-first: the app answers clients; once an answer is finished, the tap offers the request
 *   and the answer (its body as sent, left on the Exchange by bindings/send.ts) to the mirror, which
 *   puts the request to SHADOW_URL.
 * - legacy-first: the front (front.ts) answers clients from SHADOW_URL and offers each copy to the
 *   mirror, which puts it to the app listening on loopback; the tap there tells the mirror what the
 *   copy was (operation, binding), for the metrics and the report.
 */
export interface Shadow {
  tap: RequestTap;
  /** What serves the service's port, given the app. */
  listener(app: http.RequestListener): Promise<http.RequestListener>;
  close(): Promise<void>;
}

/** What a copy to the legacy host leaves out: the target's own Host, a recomputed length, the body already inflated. */
const SERVICE_FIRST_DROP = [...HOP_BY_HOP, 'host', 'content-length', 'content-encoding', 'x-request-id'];

/**
 * `keep`: where each batch of settled comparisons is written, the verdict's totals (process/server.ts
 * gives the store's). `pen`: who writes the differences log (a cluster worker's primary:
 * log-relay.ts); by default this process.
 */
export function createShadow(config: Config, keep: ComparedSink | null = null, pen?: Pen): Shadow | null {
  const shadow = config.shadow;
  if (shadow === null) return null;
  const report = openReport(shadow.log, shadow, pen);
  // The client's path with this service's virtual directory replaced by the legacy site's.
  const siteAt = (url: string): LegacySite => {
    const root = new URL(url);
    return { origin: root.origin, prefix: root.pathname.replace(/\/$/, ''), strip: config.basePath.length };
  };
  const legacy = siteAt(shadow.url);
  const secondary = shadow.secondaryUrl === null ? null : siteAt(shadow.secondaryUrl);
  const site = { report, legacy, secondary, keep };
  return shadow.mode === 'service-first' ? serviceFirst(config, shadow, site) : legacyFirst(config, shadow, site);
}

/** The legacy site and how a client's path maps onto it. */
type LegacySite = Pick<CopyTarget, 'origin' | 'prefix' | 'strip'>;

/** What a copy may hold and how long it may take, as the settings say, whichever answer is the legacy one. */
const copyLimits = ({ concurrency, queue, pipeline, timeoutMs, queueBytes }: ShadowConfig) => ({
  concurrency,
  queue,
  pipeline,
  timeoutMs,
  queueBytes,
});

/** Where the copies and their outcomes go: the report, the legacy sites, the totals' sink. */
interface Ends {
  report: Report;
  legacy: LegacySite;
  secondary: LegacySite | null;
  keep: ComparedSink | null;
}

function serviceFirst(config: Config, shadow: ShadowConfig, { report, legacy, secondary, keep }: Ends): Shadow {
  const target = {
    ...legacy,
    keepHost: false,
    primary: 'ours' as const,
    ...copyLimits(shadow),
    secondary,
  };
  const mirror = new Mirror(target, report, { mode: 'service-first', keep, priority: shadow.copierPriority });
  const mayCopy = copyRule(config.basePath, shadow.include);
  const tap: RequestTap = (req, res) => {
    const method = req.method ?? '';
    const { url } = req;
    if (!mayCopy(req) || (shadow.sample < 1 && Math.random() >= shadow.sample)) return null;
    // The app reads the body of a POST only; any other body (a GET's charset counts only with one) is kept here.
    const unread = method === 'POST' || !hasBody(req) ? null : keepUnreadBody(req, config.limits.maxBodyBytes);
    const offer = (ex: Exchange, status: number, body: unknown) => {
      // A client gone before its answer, or a body refused or cut short: nothing to compare.
      if (status === 0 || (method === 'POST' && !Buffer.isBuffer(body)) || body === undefined) return;
      mirror.offer({
        requestId: ex.requestId,
        method,
        url,
        headers: forwardable(req.rawHeaders, SERVICE_FIRST_DROP),
        body: Buffer.isBuffer(body) ? body : null,
        primary: answerOf(res, status, method === 'HEAD' ? '' : (ex.body ?? '')),
        labels: ex,
      });
    };
    return (ex, status) => {
      if (unread === null) offer(ex, status, method === 'POST' ? req.body : null);
      else void unread.then((body) => offer(ex, status, body));
    };
  };
  return { tap, listener: async (app) => app, close: async () => closeAll(mirror, report) };
}

function legacyFirst(config: Config, shadow: ShadowConfig, { report, legacy, secondary, keep }: Ends): Shadow {
  let mirror: Mirror | null = null;
  let loopback: http.Server | null = null;
  return {
    tap: () => (ex: Exchange) => mirror?.learn(ex.requestId, ex),
    async listener(app) {
      // The app on loopback, with the same limits as the public listener, for the copies.
      loopback = createServer(config.limits, app);
      await new Promise<void>((resolve, reject) => loopback!.once('error', reject).listen(0, '127.0.0.1', resolve));
      const port = (loopback.address() as AddressInfo).port;
      const self = { origin: `http://127.0.0.1:${port}`, prefix: '', strip: 0, keepHost: true, primary: 'legacy' as const };
      mirror = new Mirror(
        {
          ...self,
          ...copyLimits(shadow),
          secondary,
        },
        report,
        { mode: 'legacy-first', keep, priority: shadow.copierPriority },
      );
      // The front passes on every request; only those under BASE_PATH move to the legacy site's directory.
      const under = (url: string) => url.slice(0, legacy.strip).toLowerCase() === config.basePath.toLowerCase();
      return createFront(config, shadow, mirror, (url) => (under(url) ? legacy.prefix + url.slice(legacy.strip) : url));
    },
    async close() {
      // The copies in flight go to the app on loopback: it serves them until they have settled.
      await closeAll(mirror, report);
      loopback?.closeAllConnections();
      loopback?.close();
    },
  };
}

async function closeAll(mirror: Mirror | null, report: Report): Promise<void> {
  await mirror?.close();
  await report.close();
}

const hasBody = (req: Request) => req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;

/** The body of a request the app does not read: undefined when it did not all come (or is over the limit). */
function keepUnreadBody(req: Request, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= limit) chunks.push(chunk);
  });
  return new Promise((resolve) => {
    req.once('end', () => resolve(size <= limit ? Buffer.concat(chunks, size) : undefined));
    req.once('close', () => resolve(undefined));
  });
}

function answerOf(res: Response, status: number, body: string | Uint8Array): SentAnswer {
  const headers: SentAnswer['headers'] = {};
  for (const name of ANSWER_HEADERS) {
    const v = res.getHeader(name);
    if (v !== undefined) headers[name] = String(v);
  }
  // Node frames a body of unknown length itself; the comparison looks at the framing the client saw.
  if (headers['content-length'] === undefined && (res as unknown as { chunkedEncoding: boolean }).chunkedEncoding)
    headers['transfer-encoding'] = 'chunked';
  return { status, headers, body };
}
