import http from 'node:http';
import { countAdminRefusal, type Scrape, withReadiness } from '../app/metrics';
import type { Console } from '../console';
import { answerAndClose, behindRefusal } from '../transport/server';
import { type AdminHosts, adminHosts } from './admin-hosts';

export interface Readiness {
  ready: boolean;
  /** Why not, for the operator reading /readyz (never sent when ready). */
  reason?: string;
}

export interface AdminSources {
  metrics(): Promise<Scrape>;
  readiness(): Promise<Readiness>;
  /** A line /readyz adds to its ready answer: what works otherwise than an operator may assume (SMS not sent). */
  note?: string;
  /** The cut-over console's pages (/console, its style sheet, and / leading to it). */
  console?: Console;
}

/**
 * The admin listener, apart from the service's port so that it can stay on loopback: `/metrics`
 * (Prometheus), `/healthz` (the process answers) and `/readyz` (it can serve: store reachable and
 * taking writes, schema current, not stopping) and the cut-over console (`/console`, console/).
 * Anything else is 404. Only for a Host that names it (admin-hosts.ts; by default the loopback names):
 * any other is 421, two Host headers 400, both counted in asmx_admin_refused_total.
 * Errors are answered, never thrown.
 */
export function createAdminServer(
  sources: AdminSources,
  hosts: AdminHosts = adminHosts({ adminHost: '127.0.0.1', adminAllowedHosts: [] }),
): http.Server {
  return http.createServer((req, res) => {
    if (behindRefusal(req)) return;
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, contentType: string, body: string) => {
      res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : body);
    };
    const text = 'text/plain; charset=utf-8';
    const host = hosts.verdict(req);
    if (host === 'two_hosts') {
      countAdminRefusal('two_hosts');
      // A request node could not read as one host: refused as a parser error is, the connection closed.
      return answerAndClose(req, res, () => send(400, text, 'bad request: more than one Host header\n'));
    }
    if (host === 'foreign') {
      countAdminRefusal('host');
      return send(421, text, 'misdirected request: the Host is not a name of this listener (ADMIN_ALLOWED_HOSTS)\n');
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, text, 'method not allowed\n');
    const answer = (async () => {
      switch (path) {
        case '/healthz':
          return send(200, text, 'ok\n');
        case '/readyz': {
          const r = await sources.readiness();
          const note = sources.note === undefined ? '' : `${sources.note}\n`;
          return r.ready ? send(200, text, `ready\n${note}`) : send(503, text, `not ready: ${r.reason ?? 'unknown'}\n`);
        }
        case '/metrics': {
          // Readiness too (asmx_ready): Prometheus scrapes /metrics, not /readyz.
          const [m, r] = await Promise.all([sources.metrics(), sources.readiness()]);
          const scraped = await withReadiness(m, r.ready);
          return send(200, scraped.contentType, scraped.body);
        }
        default: {
          const page = sources.console?.answer(path);
          if (page === undefined || page === null) return send(404, text, 'not found\n');
          const { status, headers, body } = await page;
          res.writeHead(status, { ...headers, 'Content-Length': Buffer.byteLength(body) });
          return res.end(req.method === 'HEAD' ? undefined : body);
        }
      }
    })();
    answer.catch(() => {
      if (!res.headersSent) send(500, text, 'error\n');
      else res.destroy();
    });
  });
}
