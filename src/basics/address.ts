import { isIPv4, isIPv6 } from 'node:net';

/**
 * IP addresses as text, in one place: the forms proxies write into X-Forwarded-For, the ranges an
 * operator writes into SMS_LIMIT_EXEMPT and CONNECTION_LIMIT_EXEMPT, and the key a caller is counted
 * under. Pure functions: the transport decides which entry to believe, the limits what to do with it.
 */

/**
 * One address in canonical text (IPv4 dotted, IPv6 lower case and compressed as RFC 5952 prints
 * it), an IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, how a dual-stack socket reports a v4
 * caller) as its IPv4 address, or null when `text` is not a plain address. A zone (`fe80::1%eth0`)
 * is dropped: it names an interface of the proxy, not a different caller.
 */
export function canonicalAddress(text: string): string | null {
  if (isIPv4(text)) return text;
  const unzoned = text.replace(/%[^%]*$/, '');
  if (!isIPv6(unzoned)) return null;
  let printed: string;
  try {
    // The URL parser prints IPv6 as RFC 5952 does, an embedded IPv4 tail as two hex groups.
    printed = new URL(`http://[${unzoned}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(printed);
  if (mapped === null) return printed;
  const [hi, lo] = [parseInt(mapped[1]!, 16), parseInt(mapped[2]!, 16)];
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/**
 * The address in one X-Forwarded-For entry, in each form the shipped proxies write: `192.0.2.1`
 * (nginx), `192.0.2.1:51234` (IIS ARR and HttpPlatformHandler append the client's port),
 * `[2001:db8::1]:51234` and `[2001:db8::1]` (bracketed IPv6, with or without a port), `2001:db8::1`
 * (bare IPv6, which nginx writes), and any of these IPv4-mapped. Null for anything else (`unknown`,
 * a host name, garbage): the caller then falls back to the socket's address.
 */
export function forwardedAddress(entry: string): string | null {
  const text = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(text);
  if (bracketed !== null) return canonicalAddress(bracketed[1]!);
  const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(text);
  if (v4WithPort !== null) return canonicalAddress(v4WithPort[1]!);
  return canonicalAddress(text);
}

/** An address and how many leading bits of it a range fixes. */
export interface AddressRange {
  /** Canonical text of the range's first address. */
  address: string;
  family: 4 | 6;
  prefix: number;
}

/** The 4 or 16 bytes of a canonical address. */
function bytesOf(address: string): Uint8Array {
  if (isIPv4(address)) return Uint8Array.from(address.split('.').map(Number));
  const [head = '', tail] = address.split('::');
  const groups = (part: string | undefined) => (part === undefined || part === '' ? [] : part.split(':'));
  // Canonical text has no IPv4 tail: every group is hex.
  const words = (part: string[]) => part.map((g) => parseInt(g, 16));
  const front = words(groups(head));
  const back = words(groups(tail));
  const all = tail === undefined ? front : [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
  return Uint8Array.from(all.flatMap((w) => [w >> 8, w & 255]));
}

function masked(bytes: Uint8Array, prefix: number): Uint8Array {
  return bytes.map((b, i) => {
    const bits = Math.min(8, Math.max(0, prefix - i * 8));
    return b & ((0xff << (8 - bits)) & 0xff);
  });
}

function textOf(bytes: Uint8Array): string {
  if (bytes.length === 4) return bytes.join('.');
  const words = Array.from({ length: 8 }, (_, i) => ((bytes[2 * i]! << 8) | bytes[2 * i + 1]!).toString(16));
  return canonicalAddress(words.join(':'))!;
}

/**
 * `192.0.2.10`, `10.0.0.0/8`, `2001:db8::5` or `2001:db8:1::/48` as a range (a lone address is its
 * own /32 or /128), or why not. Bits beyond the prefix are cleared (`10.1.2.3/8` is `10.0.0.0/8`).
 */
export function parseRange(text: string): AddressRange | string {
  const [addressText = '', prefixText, extra] = text.trim().split('/');
  const address = canonicalAddress(addressText);
  if (address === null || extra !== undefined) return 'not an IP address or CIDR range';
  const family = isIPv4(address) ? 4 : 6;
  // An IPv4-mapped range (::ffff:10.0.0.0/104) is the IPv4 range it spells, its prefix 96 bits shorter.
  const shift = family === 4 && !isIPv4(addressText) ? 96 : 0;
  const max = family === 4 ? 32 : 128;
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return 'the prefix length must be a whole number';
  const prefix = prefixText === undefined ? max : Number(prefixText) - shift;
  if (prefix > max || prefix < 0) return `the prefix length must be from ${shift + 1} to ${max + shift}`;
  // /0 is everyone: not an exemption but the limit turned off, which is almost certainly a mistake.
  if (prefix === 0) return 'a /0 range exempts every caller (raise the limit instead)';
  return { address: textOf(masked(bytesOf(address), prefix)), family, prefix };
}

/** Written back as an operator would write it. */
export const rangeText = (r: AddressRange): string => (r.prefix === (r.family === 4 ? 32 : 128) ? r.address : `${r.address}/${r.prefix}`);

/** Whether a canonical address falls in one of the ranges. */
export function inRanges(address: string, ranges: readonly AddressRange[]): boolean {
  if (ranges.length === 0) return false;
  const bytes = bytesOf(address);
  return ranges.some((r) => {
    if ((r.family === 4) !== (bytes.length === 4)) return false;
    const first = bytesOf(r.address);
    return masked(bytes, r.prefix).every((b, i) => b === first[i]);
  });
}

/**
 * What a caller is counted under: an IPv4 address itself, an IPv6 address by its /64. One IPv6
 * subscriber or server is given a whole /64 (RFC 6177) and can use any of its 2^64 addresses, so a
 * whole address as key would let one caller have a fresh allowance for every request.
 */
export function callerKey(address: string): string {
  const bytes = bytesOf(address);
  return bytes.length === 4 ? address : `${textOf(masked(bytes, 64))}/64`;
}
