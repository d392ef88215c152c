import http from 'node:http';
import { fieldsOf, log } from '../../src/basics/log';
import type { AddressInfo } from 'node:net';

export interface GatewayRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * What the fake gateway does with one request: answer with a status (and a body of the test's own),
 * never answer, or accept the message (it counts as delivered) and then drop the connection without
 * answering: a lost answer.
 */
export type Behaviour = number | { status: number; body: string } | 'hang' | 'drop';

/**
 * A local SMS provider: a real HTTP server that records every request and answers each with the
 * next scripted behaviour (200 once the script is used up). Accepted requests are `delivered`.
 * With `honourIdempotency`, a request whose Idempotency-Key was accepted before is answered 200
 * and not delivered again, as a provider that supports the header does.
 */
export class FakeGateway {
  readonly requests: GatewayRequest[] = [];
  readonly script: Behaviour[] = [];
  /** How long each answer takes: sends overlap, as with a real provider. */
  delayMs = 0;
  honourIdempotency = false;
  /** While true every request hangs (and is not delivered), whatever the script. */
  holding = false;
  private readonly keys = new Set<string>();
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.requests.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      if (this.holding) return;
      const key = req.headers['idempotency-key'];
      const replay = this.honourIdempotency && typeof key === 'string' && this.keys.has(key);
      const step = replay ? 200 : (this.script.shift() ?? 200);
      const next = typeof step === 'object' ? step.status : step;
      if (next === 'hang') return; // the client's time-out ends it; close() destroys it otherwise
      const accept = () => {
        if (replay) return;
        this.accepted += 1;
        if (typeof key === 'string') this.keys.add(key);
      };
      setTimeout(() => {
        if (next === 'drop') {
          accept();
          req.socket.destroy();
          return;
        }
        const body = typeof step === 'object' ? step.body : next < 300 ? '{"sid":"SM1"}' : '{"message":"try later"}';
        res.writeHead(next, { 'Content-Type': 'application/json' }).end(body);
        if (next < 300) accept();
      }, this.delayMs);
    });
  });
  private accepted = 0;

  get delivered(): number {
    return this.accepted;
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Waits for a condition with a bounded poll; fails with `what` if it never holds. */
export async function until(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 8000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Lets a short while pass, for checks that something did NOT happen (a second send). */
export const settle = (ms = 150): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface LogLine {
  level: 'info' | 'warn' | 'error';
  msg: string;
  fields?: Record<string, unknown>;
}

/** Records what the service logs instead of writing it; restore() puts the log back. */
export function captureLog(): { lines: LogLine[]; restore(): void } {
  const lines: LogLine[] = [];
  const spies = (['info', 'warn', 'error'] as const).map((level) =>
    jest.spyOn(log, level).mockImplementation((msg: string, fields?: Record<string, unknown>) => {
      if (fields === undefined) return void lines.push({ level, msg });
      // As the logger writes them (phones masked, secrets out), without the request id it may add.
      const { reqId, ...written } = fieldsOf(fields);
      lines.push({ level, msg, fields: 'reqId' in fields ? { reqId, ...written } : written });
    }),
  );
  return {
    lines,
    restore: () => {
      for (const s of spies) s.mockRestore();
    },
  };
}
