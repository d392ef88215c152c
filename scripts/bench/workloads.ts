/**
 * What the benchmark asks, and the data set it asks it of. Each workload is one request, sent again
 * and again; the data set is generated so that one school has exactly 10, 100, 500 and 5,000 active
 * students (names in Arabic and Latin, some needing escapes), the same for every target.
 */

export type Binding = 'soap11' | 'soap12' | 'get' | 'post';

export interface BenchRequest {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface Workload {
  id: string;
  title: string;
  operation: 'GetTokenDevice' | 'GetStudentSchool' | 'AuthCode' | 'GetAboutUs';
  binding: Binding;
  /** Students in the answer (GetStudentSchool). */
  students?: number;
  request: BenchRequest;
  /** node-soap serves SOAP only: GET and POST have no published counterpart. */
  nodeSoap: boolean;
}

export const SCHOOL_SIZES = [10, 100, 500, 5000] as const;
export const schoolUrl = (size: number) => `http://bench-${size}.school.example`;
export const DEVICE_ID = 'dev-bench-42';
const NS = 'http://tempuri.org/';

const envelope11 = (body: string) =>
  `<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>${body}</soap:Body></soap:Envelope>`;
const envelope12 = (body: string) =>
  `<?xml version="1.0" encoding="utf-8"?><soap12:Envelope xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:soap12="http://www.w3.org/2003/05/soap-envelope"><soap12:Body>${body}</soap12:Body></soap12:Envelope>`;

function soap11(path: string, op: string, body: string): BenchRequest {
  return {
    method: 'POST',
    path,
    headers: { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: `"${NS}${op}"` },
    body: envelope11(body),
  };
}

const tokenBody = `<GetTokenDevice xmlns="${NS}"><id>${DEVICE_ID}</id></GetTokenDevice>`;
// show_active is a char: SOAP carries its UTF-16 code (49 is '1').
const schoolBody = (size: number) =>
  `<GetStudentSchool xmlns="${NS}"><school_base_url>${schoolUrl(size)}</school_base_url><show_active>49</show_active></GetStudentSchool>`;
const schoolQuery = (size: number) => `school_base_url=${encodeURIComponent(schoolUrl(size))}&show_active=1`;

const PUSH = '/PushNotificationMobile.asmx';
const NOTES = '/NotificationNotes.asmx';
const ABOUT = '/AboutUs.asmx';

export const WORKLOADS: readonly Workload[] = [
  {
    id: 'token-soap11',
    title: 'GetTokenDevice, SOAP 1.1',
    operation: 'GetTokenDevice',
    binding: 'soap11',
    nodeSoap: true,
    request: soap11(PUSH, 'GetTokenDevice', tokenBody),
  },
  {
    id: 'token-soap12',
    title: 'GetTokenDevice, SOAP 1.2',
    operation: 'GetTokenDevice',
    binding: 'soap12',
    nodeSoap: true,
    request: {
      method: 'POST',
      path: PUSH,
      headers: { 'Content-Type': 'application/soap+xml; charset=utf-8' },
      body: envelope12(tokenBody),
    },
  },
  // An operation of no parameters and no result (void): the envelope, routing and the empty answer alone.
  {
    id: 'aboutus-soap11',
    title: 'GetAboutUs (empty), SOAP 1.1',
    operation: 'GetAboutUs',
    binding: 'soap11',
    nodeSoap: true,
    request: soap11(ABOUT, 'GetAboutUs', `<GetAboutUs xmlns="${NS}" />`),
  },
  {
    id: 'aboutus-soap12',
    title: 'GetAboutUs (empty), SOAP 1.2',
    operation: 'GetAboutUs',
    binding: 'soap12',
    nodeSoap: true,
    request: {
      method: 'POST',
      path: ABOUT,
      headers: { 'Content-Type': 'application/soap+xml; charset=utf-8' },
      body: envelope12(`<GetAboutUs xmlns="${NS}" />`),
    },
  },
  {
    id: 'token-get',
    title: 'GetTokenDevice, HTTP GET',
    operation: 'GetTokenDevice',
    binding: 'get',
    nodeSoap: false,
    request: { method: 'GET', path: `${PUSH}/GetTokenDevice?id=${DEVICE_ID}`, headers: {} },
  },
  {
    id: 'token-post',
    title: 'GetTokenDevice, HTTP POST',
    operation: 'GetTokenDevice',
    binding: 'post',
    nodeSoap: false,
    request: {
      method: 'POST',
      path: `${PUSH}/GetTokenDevice`,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `id=${DEVICE_ID}`,
    },
  },
  ...SCHOOL_SIZES.flatMap((size): Workload[] => [
    {
      id: `school${size}-soap11`,
      title: `GetStudentSchool, ${size} students, SOAP 1.1`,
      operation: 'GetStudentSchool',
      binding: 'soap11',
      students: size,
      nodeSoap: true,
      request: soap11(NOTES, 'GetStudentSchool', schoolBody(size)),
    },
    {
      id: `school${size}-get`,
      title: `GetStudentSchool, ${size} students, HTTP GET`,
      operation: 'GetStudentSchool',
      binding: 'get',
      students: size,
      nodeSoap: false,
      request: { method: 'GET', path: `${NOTES}/GetStudentSchool?${schoolQuery(size)}`, headers: {} },
    },
  ]),
  { id: 'authcode-soap11', title: 'AuthCode, SOAP 1.1', operation: 'AuthCode', binding: 'soap11', nodeSoap: true, request: authCode(4821) },
];

function authCode(code: number): BenchRequest {
  return soap11(
    '/AuthCodeSending.asmx',
    'AuthCode',
    `<AuthCode xmlns="${NS}"><code>${code}</code><phone>+9647701234567</phone></AuthCode>`,
  );
}

/** Codes handed out so far in this run: each AuthCode request the bench sends is a new one. */
let codes = 10_000_000;

/**
 * `count` requests for `w`, to be sent in turn: its one request, or for AuthCode as many distinct
 * ones. The service refuses a code and phone seen in the last two minutes as a duplicate, before the
 * limits and the outbox: the same request again and again measured that refusal, not AuthCode.
 */
export function requestsFor(w: Workload, count: number): BenchRequest[] {
  const fresh = freshRequests(w);
  return fresh === undefined ? [w.request] : Array.from({ length: Math.max(1, count) }, fresh);
}

/** For a workload whose every request must be new (AuthCode), the maker of the next one; else undefined. */
export function freshRequests(w: Workload): (() => BenchRequest) | undefined {
  return w.operation === 'AuthCode' ? () => authCode(codes++) : undefined;
}

/**
 * The service's settings for the bench besides the store's: limits no bench load reaches (AuthCode
 * queues every request, as an app's sign-ins spread over many phones would be), and no SMS gateway
 * (the outbox keeps what is queued: nothing is texted).
 */
export const BENCH_SERVICE_ENV: Readonly<Record<string, string>> = {
  SMS_GATEWAY: 'none',
  SMS_LIMIT_PER_PHONE: '999999999',
  SMS_LIMIT_PER_ADDRESS: '999999999',
  SMS_LIMIT_GLOBAL_PER_MINUTE: '999999999',
  SMS_LIMIT_GLOBAL_PER_HOUR: '999999999',
  SMS_LIMIT_GLOBAL_PER_DAY: '999999999',
};

/** --quick: one of each kind, for trying a change. */
export const QUICK = ['token-soap11', 'token-get', 'school500-soap11'];

/** Shadowing's cost is measured on a small call and a 500-student roster, the two kinds issue 24 sets limits for. */
export const SHADOWED = ['token-soap11', 'school500-soap11'];

export interface Student {
  school: string;
  id: string;
  fullName: string;
  device: string;
  showActive: string;
}

/** Every school's students, active and not, plus other schools' rows so that the index matters. */
export function benchStudents(): Student[] {
  const rows: Student[] = [];
  let id = 100000;
  const add = (school: string, showActive: string) => {
    id++;
    const fullName = id % 3 === 0 ? `طالب ${id} "العلي"` : id % 7 === 0 ? `Smith & <Sons> ${id}` : `Student ${id}`;
    rows.push({ school, id: String(id), fullName, device: id % 10 === 0 ? '' : `dev-${id}`, showActive });
  };
  for (const size of SCHOOL_SIZES) {
    for (let i = 0; i < size; i++) add(schoolUrl(size), '1');
    for (let i = 0; i < size / 10; i++) add(schoolUrl(size), '0');
  }
  for (let i = 0; i < 20000; i++) add(`http://other-${i % 200}.school.example`, '1');
  return rows;
}

export function benchDevices(): { id: string; token: string }[] {
  const devices = [{ id: DEVICE_ID, token: 'fcm:APA91bE-bench-token-0123456789abcdefghijklmnopqrstuvwxyz' }];
  for (let i = 0; i < 20000; i++) devices.push({ id: `dev-${100000 + i}`, token: `fcm:token-${i}` });
  return devices;
}
