import net from 'node:net';
import { parseResponse, type RawResponse } from '../../scripts/fuzz/wire';

export interface RawExchange {
  /** Every response the server sent before it ended the connection. */
  responses: RawResponse[];
  /** How the connection ended: the server's FIN, a reset, or still open when the test gave up. */
  ended: 'end' | 'reset' | 'open';
}

/**
 * Sends `bytes` as written on a new connection to 127.0.0.1:`port` and reads until the server ends it
 * (`giveUpMs` at most: liveness only), every response it sent read in order.
 */
export function rawExchange(port: number, bytes: string | Buffer, giveUpMs = 10_000): Promise<RawExchange> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    let data = Buffer.alloc(0);
    const done = (ended: RawExchange['ended']) => {
      clearTimeout(timer);
      socket.destroy();
      const responses: RawResponse[] = [];
      for (let rest = data; rest.length > 0; ) {
        const r = parseResponse(rest, 'GET', true);
        if (r === null) break;
        responses.push(r);
        rest = rest.subarray(rest.indexOf('\r\n\r\n') + 4 + r.body.length);
      }
      resolve({ responses, ended });
    };
    const timer = setTimeout(() => done('open'), giveUpMs);
    socket.on('data', (d: Buffer) => (data = Buffer.concat([data, d])));
    socket.on('end', () => done('end'));
    socket.on('error', () => done('reset'));
  });
}
