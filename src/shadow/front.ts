import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { Config, ShadowConfig } from '../config';
import { HostErrors } from '../basics/errors';
import { answerCap } from './budget';
import { ANSWER_HEADERS } from './compare';
import { countShadow, type DropReason } from './metrics';
import { copyRule, forwardable, HOP_BY_HOP } from './copy-rule';
import type { Mirror } from './mirror';

/** ASP.NET's default executionTimeout: the longest the legacy host itself lets a request run. */
const LEGACY_TIMEOUT_MS = 110_000;

/** What a copy to this service leaves out of the client's request: it gets its own id and length. */
const COPY_DROP = [...HOP_BY_HOP, 'content-length', 'x-request-id'];

/**
 * SHADOW_MODE=legacy-first: a reverse proxy in front of the legacy host. Each request goes to the
 * legacy host as it comes (streamed, the client's Host kept, so its addresses are the public ones);
 * the client gets the legacy answer as it was given, hop-by-hop headers aside. Once the client has it,
 * a copy of the request (its bytes kept on the way through, up to MAX_BODY_BYTES) is offered to the
 * mirror, which puts it to this service and compares.
 */
export function createFront(
  config: Config,
  shadow: ShadowConfig,
  mirror: Mirror,
  legacyPath: (url: string) => string,
): http.RequestListener {
  const legacy = new URL(shadow.url);
  const client = legacy.protocol === 'https:' ? https : http;
  const agent = new client.Agent({ keepAlive: true });

  const mayCopy = copyRule(config.basePath, shadow.include);
  // The legacy answer is read for a comparison no further than the copier reads the service's (budget.ts),
  // and a copy larger than SHADOW_QUEUE_BYTES would never fit: such bytes are not kept while the client is answered.
  const answerAtMost = answerCap(shadow.queueBytes, shadow.concurrency);

  return (req, res) => {
    const url = req.url ?? '/';
    const method = req.method ?? 'GET';
    let kept: Buffer[] | null = mayCopy(req) && Math.random() < shadow.sample ? [] : null;
    /** Why the copy was given up for its size, if it was: counted as dropped once the client has its answer. */
    let tooLarge: DropReason | null = null;
    let size = 0;
    let answered = 0;
    const giveUp = (reason: DropReason) => {
      kept = null;
      tooLarge = reason;
    };
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (kept === null) return;
      if (size > config.limits.maxBodyBytes) kept = null;
      else if (size > shadow.queueBytes) giveUp('bytes');
      else kept.push(chunk);
    });

    const headers = forwardable(req.rawHeaders, HOP_BY_HOP);
    headers.push('X-Forwarded-For', req.socket.remoteAddress ?? '');
    const upstream = client.request({
      hostname: legacy.hostname,
      port: legacy.port,
      method,
      path: legacyPath(url),
      headers,
      agent,
      setHost: false,
      timeout: LEGACY_TIMEOUT_MS,
    });
    req.pipe(upstream);
    // The client gone before its answer: the legacy host's work is abandoned too.
    res.once('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    upstream.once('timeout', () => upstream.destroy(new Error('legacy host timed out')));
    upstream.once('error', () => {
      countShadow({}, 'legacy_error');
      if (res.headersSent) return void res.destroy();
      const page = HostErrors.badGateway();
      res.writeHead(page.status, { 'Content-Type': page.contentType, 'Content-Length': Buffer.byteLength(page.body) }).end(page.body);
    });

    upstream.once('response', (answer) => {
      const body: Buffer[] = [];
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, forwardable(answer.rawHeaders, HOP_BY_HOP));
      answer.on('data', (chunk: Buffer) => {
        if (kept === null) return;
        // An answer larger than any this service gives is passed on, not kept for a comparison.
        answered += chunk.length;
        if (answered > answerAtMost) giveUp('answer_bytes');
        else if (size + answered > shadow.queueBytes) giveUp('bytes');
        else body.push(chunk);
      });
      answer.once('error', () => res.destroy());
      answer.pipe(res);
      res.once('finish', () => {
        // A body over MAX_BODY_BYTES is no copy to drop: this service would refuse it (not copied, as in service-first).
        if (tooLarge !== null && req.complete && size <= config.limits.maxBodyBytes) countShadow({}, 'dropped', 1, tooLarge);
        if (kept === null || !req.complete) return;
        const h: Record<string, string | undefined> = {};
        for (const k of ANSWER_HEADERS) h[k] = answer.headers[k] as string | undefined;
        mirror.offer({
          requestId: `shadow-${randomUUID()}`,
          method,
          url,
          headers: forwardable(req.rawHeaders, COPY_DROP),
          body: size > 0 || method === 'POST' ? Buffer.concat(kept, size) : null,
          primary: {
            status: answer.statusCode ?? 0,
            headers: h,
            body: method === 'HEAD' ? '' : Buffer.concat(body),
            encoding: answer.headers['content-encoding'],
          },
          labels: {},
        });
      });
    });
  };
}
