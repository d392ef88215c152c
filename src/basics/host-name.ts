import { isIPv4, isIPv6 } from 'node:net';

/**
 * The host a `Host` header names, read one way for the admin listener's check (process/admin-hosts.ts)
 * and for the names an operator lists in ADMIN_ALLOWED_HOSTS (config): lower case, without its port
 * or a final dot, an IPv6 address without its brackets.
 */
export interface HostName {
  name: string;
  /**
   * An IP address written as such. A browser sends one only for a page it loaded from that very
   * address, so no DNS answer can put another site's page behind it (DNS rebinding needs a name).
   */
  address: boolean;
}

/** A DNS name: labels of letters, digits, hyphens (and underscores, which container names use). */
const DNS_NAME = /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/** host[:port] (a bracketed IPv6 address, or anything without a colon), the port possibly empty as RFC 3986 allows. */
const HOST_AND_PORT = /^(?:\[([^\]]*)\]|([^:[\]]*))(?::(\d{0,5}))?$/;

/** The host of `value` (a Host header; without `port`, a bare host), or null when it is no host a URL can hold. */
export function hostName(value: string, port = true): HostName | null {
  const m = HOST_AND_PORT.exec(value.trim().toLowerCase());
  if (m === null || (!port && m[3] !== undefined)) return null;
  if (m[1] !== undefined) return isIPv6(m[1]) ? { name: m[1], address: true } : null;
  const name = m[2]!.replace(/\.$/, '');
  if (isIPv4(name)) return { name, address: true };
  return DNS_NAME.test(name) ? { name, address: false } : null;
}
