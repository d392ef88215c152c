import http from 'http';
import { request, TOKEN_PATH } from './service';

/**
 * A bounded load of GET and SOAP calls (alternating) for the stop tests: `fresh` clients open a new
 * connection for each request, `keepAlive` clients reuse one (a new one only when an answer closed
 * it). Each counts what it got; every outcome other than a whole 200 answer is a failure, except a
 * refused connect, which a balancer retries elsewhere (the port has closed).
 */
export interface LoadOptions {
  port: number;
  fresh: number;
  keepAlive: number;
  /** Called once, when this many answers have arrived (a count, not a time). */
  signalAfterOk: number;
  signal(): void;
  /** The load ends once this says so (checked before each request, with the counts so far). */
  done(sofar: LoadResult): boolean;
}

export interface LoadResult {
  ok: number;
  okAfterSignal: number;
  refused: number;
  failures: string[];
}

const SOAP =
  '<?xml version="1.0" encoding="utf-8"?><soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body><GetTokenDevice xmlns="http://tempuri.org/"><id>dev-1001</id></GetTokenDevice></soap:Body></soap:Envelope>';

export async function stopLoad(o: LoadOptions): Promise<LoadResult> {
  const result: LoadResult = { ok: 0, okAfterSignal: 0, refused: 0, failures: [] };
  let signalled = false;
  const loop = async (i: number, keepAlive: boolean) => {
    const agent = keepAlive ? new http.Agent({ keepAlive: true, maxSockets: 1 }) : false;
    try {
      for (let n = 0; !o.done(result) && result.failures.length < 20; n += 1) {
        const soap = (i + n) % 2 === 1;
        const what = `${soap ? 'SOAP' : 'GET'} on a ${keepAlive ? 'keep-alive' : 'new'} connection${signalled ? ', after the signal' : ''}`;
        try {
          const r = soap
            ? await request(o.port, '/PushNotificationMobile.asmx', {
                agent,
                method: 'POST',
                headers: { 'Content-Type': 'text/xml; charset=utf-8', SOAPAction: '"http://tempuri.org/GetTokenDevice"' },
                body: SOAP,
              })
            : await request(o.port, TOKEN_PATH, { agent });
          if (r.status !== 200 || !r.body.includes('fcm:APA91bH-token-1001')) {
            result.failures.push(`${what}: status ${r.status}: ${r.body.replace(/\s+/g, ' ').slice(0, 80)}`);
            continue;
          }
          result.ok += 1;
          if (signalled) result.okAfterSignal += 1;
          else if (result.ok >= o.signalAfterOk) {
            signalled = true;
            o.signal();
          }
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          if (code === 'ECONNREFUSED' && signalled) {
            result.refused += 1;
            continue;
          }
          result.failures.push(`${what}: ${code ?? String(e)}`);
        }
      }
    } finally {
      if (agent !== false) agent.destroy();
    }
  };
  await Promise.all([...Array.from({ length: o.fresh }, (_, i) => loop(i, false)), ...Array.from({ length: o.keepAlive }, (_, i) => loop(i, true))]);
  return result;
}

/** Polls `/readyz` on `adminPort` as a balancer does; `notReady` turns true at the first answer that is not 200. */
export function readinessWatch(adminPort: number): { notReady(): boolean; stop(): void } {
  let notReady = false;
  let stopped = false;
  const poll = async () => {
    while (!stopped && !notReady) {
      const status = await request(adminPort, '/readyz').then((r) => r.status, () => 0);
      if (status !== 200) notReady = true;
      else await new Promise((r) => setTimeout(r, 20));
    }
  };
  void poll();
  return { notReady: () => notReady, stop: () => (stopped = true) };
}
