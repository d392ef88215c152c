/**
 * The fuzzer's raw material: one valid request of every binding, and the mutations a hostile client
 * applies to them (as zzuf and the classic attack lists do). Everything is driven by a seeded
 * generator, so a run is repeatable from its seed.
 */

/** mulberry32: small, fast and good enough to pick mutations reproducibly. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)];
  }
}

/** A request as its parts, so that mutations can change one part and keep the framing right. */
export interface RequestParts {
  method: string;
  target: string;
  headers: [string, string][];
  body: Buffer;
}

export interface Case {
  /** Which seed and mutation made it, to name a failure. */
  name: string;
  bytes: Buffer;
  /** The method as the server will read it: a HEAD answer has no body. */
  method: string;
}

const NS = 'http://tempuri.org/';
const ENV11 = 'http://schemas.xmlsoap.org/soap/envelope/';
const ENV12 = 'http://www.w3.org/2003/05/soap-envelope';

function envelope(envNs: string, op: string, params: Record<string, string>): string {
  const inner = Object.entries(params)
    .map(([k, v]) => `<${k}>${v}</${k}>`)
    .join('');
  return `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="${envNs}"><soap:Body><${op} xmlns="${NS}">${inner}</${op}></soap:Body></soap:Envelope>`;
}

interface OperationSample {
  endpoint: string;
  op: string;
  /** SOAP parameter values (a char travels as its UTF-16 code). */
  soap: Record<string, string>;
  /** HTTP GET/POST parameter values (a char is itself). */
  http: Record<string, string>;
  /** Has an effect (AuthCode queues an SMS): left out against a service in production. */
  effect?: boolean;
}

const SAMPLES: readonly OperationSample[] = [
  { endpoint: 'PushNotificationMobile', op: 'GetTokenDevice', soap: { id: 'dev-1001' }, http: { id: 'dev-1001' } },
  { endpoint: 'PushNotificationMobile', op: 'GetServerKeyAndSender', soap: {}, http: {} },
  {
    endpoint: 'NotificationNotes',
    op: 'GetStudentSchool',
    soap: { school_base_url: 'http://alnoor.school.example', show_active: '49' },
    http: { school_base_url: 'http://alnoor.school.example', show_active: '1' },
  },
  {
    endpoint: 'GetStudnetsMarks',
    op: 'GetStudentsMarks',
    soap: { StudnetID: '1001', SubjectID: '7' },
    http: { StudnetID: '1001', SubjectID: '7' },
  },
  { endpoint: 'AboutUs', op: 'GetAboutUs', soap: {}, http: {} },
  {
    endpoint: 'AuthCodeSending',
    op: 'AuthCode',
    soap: { code: '4821', phone: '+9647700000000' },
    http: { code: '4821', phone: '+9647700000000' },
    effect: true,
  },
];

const form = (params: Record<string, string>) =>
  Object.entries(params)
    .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
    .join('&');

/** One valid request of every binding for every operation, and the service pages. */
export function seedRequests(host: string, basePath = '', includeEffects = true): RequestParts[] {
  const seeds: RequestParts[] = [];
  const h = (...more: [string, string][]): [string, string][] => [['Host', host], ...more];
  for (const s of SAMPLES) {
    if (s.effect === true && !includeEffects) continue;
    const path = `${basePath}/${s.endpoint}.asmx`;
    seeds.push(
      {
        method: 'POST',
        target: path,
        headers: h(['Content-Type', 'text/xml; charset=utf-8'], ['SOAPAction', `"${NS}${s.op}"`]),
        body: Buffer.from(envelope(ENV11, s.op, s.soap)),
      },
      {
        method: 'POST',
        target: path,
        headers: h(['Content-Type', 'application/soap+xml; charset=utf-8']),
        body: Buffer.from(envelope(ENV12, s.op, s.soap)),
      },
      { method: 'GET', target: `${path}/${s.op}?${form(s.http)}`, headers: h(), body: Buffer.alloc(0) },
      {
        method: 'POST',
        target: `${path}/${s.op}`,
        headers: h(['Content-Type', 'application/x-www-form-urlencoded']),
        body: Buffer.from(form(s.http)),
      },
      { method: 'GET', target: `${path}?op=${s.op}`, headers: h(), body: Buffer.alloc(0) },
    );
  }
  for (const query of ['?wsdl', '?disco', '']) {
    seeds.push({ method: 'GET', target: `${basePath}/AboutUs.asmx${query}`, headers: h(), body: Buffer.alloc(0) });
  }
  return seeds;
}

/** The bytes of a request; Content-Length follows the body unless `declaredLength` lies about it. */
export function serialize(r: RequestParts, declaredLength?: number): Buffer {
  let head = `${r.method} ${r.target} HTTP/1.1\r\n`;
  for (const [k, v] of r.headers) head += `${k}: ${v}\r\n`;
  if (r.body.length > 0 || declaredLength !== undefined) head += `Content-Length: ${declaredLength ?? r.body.length}\r\n`;
  return Buffer.concat([Buffer.from(`${head}\r\n`, 'latin1'), r.body]);
}

const INVALID_UTF8 = [
  Buffer.from([0xc3, 0x28]),
  Buffer.from([0xff, 0xfe]),
  Buffer.from([0xc0, 0xaf]),
  Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0xf8, 0x88, 0x80, 0x80]),
];

function insertAt(buf: Buffer, at: number, piece: Buffer): Buffer {
  return Buffer.concat([buf.subarray(0, at), piece, buf.subarray(at)]);
}

/** Replaces the text of the first parameter element, or appends to the operation element. */
function withBodyContent(r: RequestParts, content: string): RequestParts {
  const text = r.body.toString('utf8');
  const close = text.indexOf('</soap:Body>');
  if (close === -1) return { ...r, body: Buffer.concat([r.body, Buffer.from(content)]) };
  const opClose = text.lastIndexOf('</', close - 1);
  return { ...r, body: Buffer.from(text.slice(0, opClose) + content + text.slice(opClose)) };
}

type Mutation = (r: RequestParts, rng: Rng) => { bytes: Buffer; method?: string };

/** The mutations, by name; each returns the whole request as bytes. */
export const MUTATIONS: Readonly<Record<string, Mutation>> = {
  bitflips: (r, rng) => {
    const bytes = Buffer.from(serialize(r));
    const flips = 1 + rng.int(Math.max(1, Math.floor(bytes.length / 64)));
    for (let i = 0; i < flips; i++) bytes[rng.int(bytes.length)] ^= 1 << rng.int(8);
    return { bytes };
  },
  bodyBitflips: (r, rng) => {
    const body = Buffer.from(r.body);
    for (let i = 0; i < 1 + rng.int(8) && body.length > 0; i++) body[rng.int(body.length)] ^= 1 << rng.int(8);
    return { bytes: serialize({ ...r, body }) };
  },
  truncate: (r, rng) => {
    const bytes = serialize(r);
    return { bytes: bytes.subarray(0, 1 + rng.int(bytes.length - 1)) };
  },
  truncateBody: (r, rng) => ({ bytes: serialize({ ...r, body: r.body.subarray(0, rng.int(r.body.length + 1)) }) }),
  repeatedElements: (r, rng) => ({ bytes: serialize(withBodyContent(r, '<id>x</id>'.repeat(rng.pick([1000, 10_000, 20_000])))) }),
  deepNesting: (r, rng) => {
    const depth = rng.pick([63, 65, 1000, 50_000]);
    return { bytes: serialize(withBodyContent(r, '<a>'.repeat(depth) + '</a>'.repeat(depth))) };
  },
  invalidUtf8Body: (r, rng) => ({ bytes: serialize({ ...r, body: insertAt(r.body, rng.int(r.body.length + 1), rng.pick(INVALID_UTF8)) }) }),
  invalidUtf8Url: (r, rng) => {
    const piece = rng.pick(['%C3%28', '%FF', '%C0%AF', '%ED%A0%80', '\u00ff']);
    const at = 1 + rng.int(r.target.length);
    return { bytes: serialize({ ...r, target: r.target.slice(0, at) + piece + r.target.slice(at) }) };
  },
  nulBytes: (r, rng) => {
    const bytes = serialize(r);
    return { bytes: insertAt(bytes, rng.int(bytes.length + 1), Buffer.alloc(1 + rng.int(3))) };
  },
  lyingLength: (r, rng) => {
    const declared = rng.next() < 0.5 ? rng.int(r.body.length + 1) : r.body.length + 1 + rng.int(100);
    return { bytes: serialize(r, declared) };
  },
  malformedEscape: (r, rng) => {
    const at = 1 + rng.int(r.target.length);
    const piece = rng.pick(['%', '%z', '%4', '%%', '%u12', '%uZZZZ', '%00', '%2e%2e/']);
    return { bytes: serialize({ ...r, target: r.target.slice(0, at) + piece + r.target.slice(at) }) };
  },
  hostileHeaders: (r, rng) => {
    const extra = rng.pick<[string, string]>([
      ['Content-Type', 'text/xml; charset=x-unknown-charset'],
      ['Content-Type', 'application/soap+xml; charset=utf-16; action="%%"'],
      ['Content-Encoding', 'gzip'],
      ['Transfer-Encoding', 'chunked'],
      ['SOAPAction', '"\u00ff%zz"'],
      ['X-Forwarded-Host', '<script>'],
      ['Host', ''],
      ['Expect', '100-continue'],
      ['X-Long', 'y'.repeat(20_000)],
    ]);
    return { bytes: serialize({ ...r, headers: [...r.headers, extra] }) };
  },
  method: (r, rng) => {
    const method = rng.pick(['HEAD', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'TRACE', 'CONNECT', 'PROPFIND', 'get']);
    return { bytes: serialize({ ...r, method }), method };
  },
};

/** A mutated request: a seed and a mutation, picked by the generator. */
export function mutate(seeds: readonly RequestParts[], rng: Rng): Case {
  const seedIndex = rng.int(seeds.length);
  const seed = seeds[seedIndex];
  const name = rng.pick(Object.keys(MUTATIONS));
  const { bytes, method } = MUTATIONS[name](seed, rng);
  const firstSpace = bytes.indexOf(0x20);
  return {
    name: `${name} of ${seed.method} ${seed.target}`,
    bytes,
    method: method ?? (firstSpace > 0 ? bytes.subarray(0, firstSpace).toString('latin1') : ''),
  };
}
