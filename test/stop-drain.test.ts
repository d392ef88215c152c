import { request, type Service, servicesPerTest, steadyLoad } from './helpers/service';

/**
 * A stop resets nothing (issue 30, rule 3), on a direct listener. Closing a listening socket makes
 * the kernel reset the connections it completed but the process had not yet taken; a busy service
 * has tens of them. 128 clients each open a new connection per request (GET and SOAP in turn), so
 * the accept queue is never empty under this load: before the listener closed in two steps
 * (transport/listener-close.ts), each SIGTERM reset 60 to 127 of them. Now every request sent is
 * answered whole and a connect after the close is refused, never reset.
 */
const service = servicesPerTest();

describe.each([
  ['one process', {}],
  ['WORKERS=2', { WORKERS: '2' }],
])('%s', (_name, env) => {
  test('SIGTERM under 128 clients on new connections: every request answered, none reset, exit 0', async () => {
    const s = await service({ env: { ...env, SHUTDOWN_TIMEOUT_MS: '20000' } });
    const load = await steadyLoad(s.port, 128, 400, () => s.proc.kill('SIGTERM'), true);
    expect(load.failures).toEqual([]);
    expect(load.refused).toBe(128);
    expect(await s.exited).toEqual({ code: 0, signal: null });
  }, 60000);

  test('DRAIN_DELAY_MS: not ready at once, still serving new connections, then closed', async () => {
    const s = await service({ env: { ...env, DRAIN_DELAY_MS: '3000' } });
    await waitForLog(s, 'admin listener');
    s.proc.kill('SIGTERM');
    await s.waitFor((l) => l.msg === 'stopping' || l.msg === 'stopping workers');
    const ready = await request(s.adminPort, '/readyz');
    expect([ready.status, ready.body]).toEqual([503, 'not ready: shutting down\n']);
    // The port still serves (a balancer that reads /readyz is still taking this instance out).
    const served = await request(s.port, '/PushNotificationMobile.asmx/GetTokenDevice?id=dev-1001', { agent: false });
    expect(served.status).toBe(200);
    expect(served.headers.connection).toBe('close');
    expect(s.proc.exitCode).toBeNull();
    expect(await s.exited).toEqual({ code: 0, signal: null });
    await expect(request(s.port, '/', { agent: false })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  }, 30000);
});

const waitForLog = (s: Service, msg: string) => s.waitFor((l) => l.msg === msg);
