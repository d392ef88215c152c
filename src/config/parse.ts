import { type AddressRange, parseRange } from '../basics/address';
import { hostName } from '../basics/host-name';

/**
 * The validators every setting goes through: each either returns the value, normalised, or throws a
 * ConfigError whose message is one line naming the variable (main turns it into exit code 1).
 */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

export type Env = Record<string, string | undefined>;

/**
 * Reads a variable, with the default when it is unset. `N` is the names a loader may read: each
 * loader lists its settings (`LIMIT_SETTINGS`, ...), so a name read but not listed fails the type
 * check, and the list is what tells a setting from a near miss (near-miss.ts).
 */
export type Getter<N extends string = string> = (name: N, fallback: string) => string;

export function port(name: string, value: string): number {
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) {
    throw new ConfigError(`${name} must be a whole number from 0 to 65535, got "${value}"`);
  }
  return Number(value);
}

export function wholeNumber(name: string, value: string, min: number, max: number): number {
  if (!/^\d{1,9}$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${value}"`);
  }
  return Number(value);
}

export function oneOf<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  const found = allowed.find((a) => a.toLowerCase() === value.trim().toLowerCase());
  if (found === undefined) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${value}"`);
  return found;
}

/**
 * What a URL setting refused got, for its message, without the value (it may hold a password): its
 * scheme, which cannot (`got the scheme "postgress"`), or that it is no URL at all.
 */
export function gotScheme(value: string): string {
  if (!URL.canParse(value)) return 'got a value that is not a URL';
  return `got the scheme "${new URL(value).protocol.slice(0, -1)}"`;
}

/** `secret`: the URL may carry a key (an SMS provider's query string), so a refusal does not echo it. */
export function absoluteUrl(name: string, value: string, secret = false): string {
  const shown = secret ? '' : `, got "${value}"`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`${name} must be an absolute URL${shown}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`${name} must be an http or https URL${shown}`);
  }
  return value;
}

export function flag(name: string, value: string): boolean {
  const v = value.toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off', ''].includes(v)) return false;
  throw new ConfigError(`${name} must be true or false, got "${value}"`);
}

export function host(name: string, value: string): string {
  if (value.trim() === '' || /\s/.test(value)) throw new ConfigError(`${name} must be a host name or address, got "${value}"`);
  return value;
}

export function nonEmpty(name: string, value: string): string {
  if (value.trim() === '') throw new ConfigError(`${name} must not be empty`);
  return value;
}

/** A comma-separated list of IP addresses and CIDR ranges, IPv4 and IPv6; empty for none. */
export function addressRanges(name: string, value: string): AddressRange[] {
  return value
    .split(',')
    .filter((item) => item.trim() !== '')
    .map((item) => {
      const range = parseRange(item);
      if (typeof range === 'string')
        throw new ConfigError(`${name} must be IP addresses or CIDR ranges such as 10.0.0.5,2001:db8::/64; "${item.trim()}": ${range}`);
      return range;
    });
}

/** A comma-separated list of host names (or addresses), as a Host header names them: lower case, no final dot; empty for none. */
export function hostNames(name: string, value: string): string[] {
  const names = value
    .split(',')
    .filter((item) => item.trim() !== '')
    .map((item) => {
      const host = hostName(item, false);
      if (host === null)
        throw new ConfigError(
          `${name} must be host names such as console.school.example,localhost (no scheme, port or path), got "${item.trim()}"`,
        );
      return host.name;
    });
  return [...new Set(names)];
}
