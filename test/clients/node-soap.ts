/**
 * node-soap's own client, the way its users call the service: `createClientAsync` on the served ?wsdl,
 * then the methods of the SOAP 1.1 port and of the SOAP 1.2 port, every operation checked against the
 * fixture data set (test/fixtures/data). Compiled with the project (`npm run build`):
 *
 *   node dist/test/clients/node-soap.js http://127.0.0.1:8080
 *
 * Prints one `FAIL node-soap <port> <operation>[ <case>]: ...` line per failed check and ends with
 * `node-soap: N passed, M failed`; exits 1 when anything failed.
 */
import { isDeepStrictEqual, inspect } from 'node:util';
import { type Client, createClientAsync } from 'soap';

const TIMEOUT_MS = 15_000;
const ALNOOR = 'http://alnoor.school.example';

type Row = [string | null, string | null, string | null, string | null];
type Method = (args: object, callback: (err: unknown, result: unknown) => void, options: object) => void;
type Port = Record<string, Method>;

let passed = 0;
let failed = 0;

function fail(name: string, why: string): void {
  failed += 1;
  process.stdout.write(`FAIL node-soap ${name}: ${why}\n`);
}

function describe(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message.split('\n')[0]}` : String(err);
}

const show = (value: unknown): string => inspect(value, { depth: 5, breakLength: Infinity });

/** Runs one call; an error fails that check alone, so every message names its operation. */
async function check(name: string, call: () => Promise<unknown>, want: unknown): Promise<void> {
  let got: unknown;
  try {
    got = await call();
  } catch (err) {
    fail(name, describe(err));
    return;
  }
  if (isDeepStrictEqual(got, want)) passed += 1;
  else fail(name, `got ${show(got)}, want ${show(want)}`);
}

/** node-soap rejects with the parsed envelope in `root`; the code is where each SOAP version puts it. */
async function expectFault(name: string, call: () => Promise<unknown>, code: string): Promise<void> {
  let got: unknown;
  try {
    got = await call();
  } catch (err) {
    const fault = (err as { root?: { Envelope?: { Body?: { Fault?: Record<string, unknown> } } } }).root?.Envelope?.Body?.Fault;
    if (fault === undefined) {
      fail(name, `${describe(err)} instead of a SOAP fault`);
      return;
    }
    const actual = fault.faultcode ?? (fault.Code as { Value?: unknown } | undefined)?.Value;
    if (actual === code) passed += 1;
    else fail(name, `fault code ${show(actual)}, want ${show(code)}`);
    return;
  }
  fail(name, `no fault, got ${show(got)}`);
}

/** One StudentInfo or several: node-soap gives an object for one and an array for more. */
function rows(result: unknown): Row[] {
  const list = (result as { GetStudentSchoolResult?: { StudentInfo?: unknown } | null } | null)?.GetStudentSchoolResult;
  const items = list?.StudentInfo ?? [];
  return (Array.isArray(items) ? items : [items]).map((s: Record<string, string | undefined>) => [
    s.id_student ?? null,
    s.fullName ?? null,
    s.id_device ?? null,
    s.ShowActive ?? null,
  ]);
}

async function main(): Promise<number> {
  const base = (process.argv[2] ?? '').replace(/\/+$/, '');
  if (base === '') {
    process.stderr.write('usage: node node-soap.js BASE_URL\n');
    return 2;
  }

  // node-soap builds every envelope as SOAP 1.1 unless told otherwise, whichever port is called; the
  // SOAP 1.2 port is reached the way its users reach it, with forceSoap12Headers.
  for (const [binding, soap12, faultCode] of [
    ['Soap', false, 'soap:Client'],
    ['Soap12', true, 'soap:Sender'],
  ] as const) {
    const clients = new Map<string, Promise<Client>>();
    /** The port's method, from a client built on first use so that an unreadable WSDL fails each check by name. */
    const call = async (svc: string, op: string, args: object): Promise<unknown> => {
      if (!clients.has(svc)) {
        clients.set(
          svc,
          createClientAsync(`${base}/${svc}.asmx?wsdl`, { forceSoap12Headers: soap12, wsdl_options: { timeout: TIMEOUT_MS } }),
        );
      }
      const client = await clients.get(svc)!;
      const port = (client[svc] as Record<string, Port> | undefined)?.[`${svc}${binding}`];
      const method = port?.[op];
      if (method === undefined) throw new Error(`the WSDL's ${svc}${binding} port has no ${op} method`);
      return new Promise((resolve, reject) => {
        method.call(port, args, (err, result) => (err ? reject(err) : resolve(result)), { timeout: TIMEOUT_MS });
      });
    };
    const token = async (id: string) =>
      ((await call('PushNotificationMobile', 'GetTokenDevice', { id })) as { GetTokenDeviceResult?: unknown } | null)
        ?.GetTokenDeviceResult ?? null;
    // System.Char travels as its UTF-16 code, as the WSDL's unsignedShort says.
    const school = async (url: string, active: string) =>
      rows(await call('NotificationNotes', 'GetStudentSchool', { school_base_url: url, show_active: active.charCodeAt(0) }));
    const b = binding;

    await check(`${b} GetTokenDevice`, () => token('dev-1001'), 'fcm:APA91bH-token-1001');
    await check(`${b} GetTokenDevice escaped`, () => token('dev-1004'), 'tok<&>"quoted"');
    await check(`${b} GetTokenDevice arabic`, () => token('dev-3001'), 'رمز-3001');
    await check(`${b} GetTokenDevice unknown`, () => token('no-such-device'), null);
    await check(`${b} GetTokenDevice empty token`, () => token('dev-empty'), '');
    // A void answer is an empty response element, which node-soap hands back as null.
    await check(`${b} GetServerKeyAndSender`, () => call('PushNotificationMobile', 'GetServerKeyAndSender', {}), null);

    await check(`${b} GetStudentSchool`, () => school(ALNOOR, '1'), [
      ['1001', 'Ali Hassan', 'dev-1001', '1'],
      ['1002', 'Zainab Kareem', 'dev-1002', '1'],
      ['1004', 'سارة محمد & <co>', 'dev-1004', '1'],
    ]);
    await check(`${b} GetStudentSchool inactive`, () => school(ALNOOR, '0'), [['1003', 'Omar Adel', 'dev-1003', '0']]);
    await check(`${b} GetStudentSchool arabic school`, () => school('http://مدرسة.example', '1'), [['3001', 'نور الهدى', 'dev-3001', '1']]);
    await check(`${b} GetStudentSchool empty`, () => school('http://nowhere.example', '1'), []);
    await check(`${b} GetStudentSchool large`, async () => (await school('http://big.school.example', '1')).length, 500);
    // 65536 does not fit a char: the service must answer with a client-side fault.
    await expectFault(
      `${b} GetStudentSchool fault`,
      () => call('NotificationNotes', 'GetStudentSchool', { school_base_url: 'x', show_active: 65536 }),
      faultCode,
    );

    await check(`${b} AuthCode`, () => call('AuthCodeSending', 'AuthCode', { code: '4821', phone: '+9647701234567' }), null);
    await check(
      `${b} GetStudentsMarks`,
      () => call('GetStudnetsMarks', 'GetStudentsMarks', { StudnetID: '1001', SubjectID: 'MATH-7' }),
      null,
    );
    await check(`${b} GetAboutUs`, () => call('AboutUs', 'GetAboutUs', {}), null);
  }

  process.stdout.write(`node-soap: ${passed} passed, ${failed} failed\n`);
  return failed === 0 ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stdout.write(`FAIL node-soap: ${describe(err)}\nnode-soap: ${passed} passed, ${failed + 1} failed\n`);
    process.exitCode = 1;
  },
);
