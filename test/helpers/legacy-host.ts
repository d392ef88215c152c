import http from 'node:http';
import type net from 'node:net';

/** A stand-in legacy host for shadowing: answers each copy (once `hold()` resolves, when given), counting them. */
export interface LegacyHost {
  url: string;
  received(): number;
  answered(): number;
  /** When each answer was sent (ms since the epoch), in order. */
  answeredAt: number[];
  close(): void;
}

export async function legacyHost(hold?: () => Promise<void>): Promise<LegacyHost> {
  let received = 0;
  const answeredAt: number[] = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    received += 1;
    req.resume();
    void (hold?.() ?? Promise.resolve()).then(() => {
      answeredAt.push(Date.now());
      res.writeHead(200, { 'Content-Type': 'text/xml; charset=utf-8' });
      res.end('<?xml version="1.0" encoding="utf-8"?><string xmlns="http://tempuri.org/">the legacy answer</string>');
    });
  });
  server.on('connection', (s) => (sockets.add(s), s.once('close', () => sockets.delete(s))));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    received: () => received,
    answered: () => answeredAt.length,
    answeredAt,
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

/** Resolves once `cond` holds, checked every 20 ms (the time-out is jest's). */
export async function until(cond: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await cond())) await new Promise((r) => setTimeout(r, 20));
}
