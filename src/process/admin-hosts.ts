import type { IncomingMessage } from 'node:http';
import { hostName } from '../basics/host-name';
import { log } from '../basics/log';
import type { Config } from '../config';
import { hasTwoHosts } from '../transport/request-url';

/**
 * Which requests the admin listener answers, by the Host they give it. A web page the operator
 * visits can have its own name resolve to the admin listener's address (DNS rebinding) and then read
 * `/metrics` and `/console` as its own origin; its requests still carry its name as Host. So a name
 * is answered only when it is one of the listener's: `localhost`, ADMIN_HOST when that is a name,
 * and ADMIN_ALLOWED_HOSTS (a reverse proxy's or a tunnel's). An IP address is always answered: a
 * browser sends one only for a page it loaded from that address, and it is what Prometheus (its
 * target's host:port) and a kubelet probe (the pod's IP) send. A request without Host (HTTP/1.0;
 * node refuses an HTTP/1.1 one) comes from no browser and is answered too. Why 421, and why every
 * path (the probes' too) is held to it: docs/security.md.
 */

export type HostVerdict = 'ours' | 'foreign' | 'two_hosts';

/** A refusal is logged at most this often, with how many there were since the last line. */
const LOG_EVERY_MS = 60_000;

export interface AdminHosts {
  verdict(req: IncomingMessage): HostVerdict;
}

export function adminHosts(config: Pick<Config, 'adminHost' | 'adminAllowedHosts'>): AdminHosts {
  const names = new Set(['localhost', ...config.adminAllowedHosts]);
  const own = hostName(config.adminHost, false);
  if (own !== null && !own.address) names.add(own.name);
  let loggedAt = -Infinity;
  let refused = 0;
  const note = (host: string) => {
    refused += 1;
    const now = Date.now();
    if (now - loggedAt < LOG_EVERY_MS) return;
    log.warn('admin listener: request refused, its Host is not a name of this listener (ADMIN_ALLOWED_HOSTS lists more)', {
      host,
      refused,
    });
    loggedAt = now;
    refused = 0;
  };
  return {
    verdict(req) {
      if (hasTwoHosts(req)) return 'two_hosts';
      const header = req.headers.host;
      if (header === undefined) return 'ours';
      const host = hostName(header);
      if (host !== null && (host.address || names.has(host.name))) return 'ours';
      note(header);
      return 'foreign';
    },
  };
}
