import { ADMIN_LISTENER, cannotListen, SERVICE_LISTENER } from '../src/process/listen';
import { freePort, type Service, servicesPerTest } from './helpers/service';

/**
 * Port clashes say what to change (issue 32): a second instance on one machine whose PORT or
 * ADMIN_PORT is taken, or ADMIN_PORT equal to PORT, ends the start with exit code 1 and one line
 * naming the setting as the last line of its output; no line before it claims to listen (the start
 * line once came after the error of the admin port, as the last line). One process and WORKERS=2.
 */

const service = servicesPerTest();

/** The process's whole stderr, once it has exited and its stderr has closed. */
async function ended(s: Service): Promise<{ code: number | null; raw: string[] }> {
  const { code } = await s.exited;
  await new Promise<void>((resolve) => (s.proc.stderr!.closed ? resolve() : s.proc.stderr!.once('close', () => resolve())));
  return { code, raw: s.raw };
}

const SECOND = 'a second instance on this machine needs its own PORT and ADMIN_PORT (ADMIN_PORT=0: no admin listener)';

function expectFailedStart({ code, raw }: { code: number | null; raw: string[] }, last: string): void {
  expect(code).toBe(1);
  expect(raw.at(-1)).toBe(last);
  expect(raw.filter((line) => line.startsWith('error: '))).toEqual([last]);
  expect(raw.filter((line) => /listening on|open http/.test(line))).toEqual([]);
}

describe.each([
  ['one process', {}],
  ['WORKERS=2', { WORKERS: '2' }],
])('%s', (_, mode: Record<string, string>) => {
  test('a second instance on the same PORT: the last line names PORT, nothing claims to listen', async () => {
    const first = await service({ env: mode });
    // A new store: its migration is logged before the port is tried, and that line must not come after the error.
    const second = await service({ env: { ...mode, PORT: String(first.port) }, waitListening: false, fresh: true });
    const out = await ended(second);
    expectFailedStart(out, `error: port ${first.port} is in use on 127.0.0.1 (PORT): another process listens there; ${SECOND}`);
    expect(out.raw.some((line) => line.includes('"schema migrated"'))).toBe(true);
  });

  test('a second instance on the same ADMIN_PORT: the last line names ADMIN_PORT, though its PORT opened', async () => {
    const first = await service({ env: mode });
    const second = await service({ env: { ...mode, ADMIN_PORT: String(first.adminPort) }, waitListening: false });
    expectFailedStart(
      await ended(second),
      `error: port ${first.adminPort} is in use on 127.0.0.1 (ADMIN_PORT): another process listens there; ${SECOND}`,
    );
  });

  test('ADMIN_PORT equal to PORT is refused before anything starts', async () => {
    const port = await freePort();
    const s = await service({ env: { ...mode, PORT: String(port), ADMIN_PORT: String(port) }, waitListening: false });
    const out = await ended(s);
    expectFailedStart(
      out,
      `error: ADMIN_PORT must differ from PORT (both ${port}, on 127.0.0.1 and 127.0.0.1): the admin listener needs a port of its own (ADMIN_PORT=0 turns it off)`,
    );
    expect(out.raw).toHaveLength(1);
  });
});

test('each reason a listener cannot open names the setting to change', () => {
  const error = (code: string) => Object.assign(new Error(`listen ${code}`), { code });
  expect(cannotListen(error('EADDRINUSE'), '0.0.0.0', 8080, SERVICE_LISTENER)).toBe(
    `port 8080 is in use on 0.0.0.0 (PORT): another process listens there; ${SECOND}`,
  );
  expect(cannotListen(error('EADDRINUSE'), '127.0.0.1', 9464, ADMIN_LISTENER)).toBe(
    `port 9464 is in use on 127.0.0.1 (ADMIN_PORT): another process listens there; ${SECOND}`,
  );
  expect(cannotListen(error('EACCES'), '0.0.0.0', 80, SERVICE_LISTENER)).toBe(
    'port 80 on 0.0.0.0 may not be opened by this user (PORT): a port below 1024 needs root or CAP_NET_BIND_SERVICE; or listen from 1024 up behind the proxy',
  );
  expect(cannotListen(error('EACCES'), '10.0.0.5', 8080, SERVICE_LISTENER)).toBe(
    'port 8080 on 10.0.0.5 may not be opened by this user (HOST, PORT)',
  );
  expect(cannotListen(error('EADDRNOTAVAIL'), '10.9.9.9', 9464, ADMIN_LISTENER)).toBe(
    '10.9.9.9 is not an address of this machine (ADMIN_HOST)',
  );
  expect(cannotListen(error('ENOTFOUND'), 'no-such-host', 8080, SERVICE_LISTENER)).toBe(
    'no-such-host is not a host name this machine can resolve (HOST)',
  );
  expect(cannotListen(error('EMFILE'), '0.0.0.0', 8080, SERVICE_LISTENER)).toBe(
    'cannot listen on 0.0.0.0:8080 (HOST, PORT): listen EMFILE',
  );
});
