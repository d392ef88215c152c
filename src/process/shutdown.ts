import type http from 'node:http';
import type net from 'node:net';
import { closeListener } from '../transport/listener-close';

/**
 * Graceful stop of an HTTP server without failing a request, in Kubernetes' order: not ready first,
 * while the listener still serves for DRAIN_DELAY_MS (a balancer that reads /readyz stops sending
 * meanwhile); then the listener closes without resetting a connection (transport/listener-close.ts),
 * requests in flight finish, each answer from then on carries `Connection: close`, and a keep-alive connection
 * is closed only once it has been idle for IDLE_GRACE_MS, so that a client who sends on it at that very
 * moment is not cut off (the race Node's own server.close() has when it closes idle connections at once).
 */
const IDLE_GRACE_MS = 1000;
const POLL_MS = 50;

let stopping = false;

/** True from the first stop signal on: readiness is false and answers close their connection. */
export function isStopping(): boolean {
  return stopping;
}

export function markStopping(): void {
  stopping = true;
}

interface ConnectionState {
  busy: number;
  idleSince: number;
  /** The answer being written, while busy. */
  res: http.ServerResponse | null;
  /** Taken paused while the listener closes: not idle, not yet read. */
  held: boolean;
}

export interface Drainable {
  /**
   * Stops accepting (when listening, after delayMs) and resolves once every connection has ended, or
   * rejects timeoutMs after the listener closed. A server fed connections by a cluster primary has no
   * listener of its own (the primary waits out the delay).
   */
  drain(timeoutMs: number, delayMs?: number): Promise<void>;
}

export function drainable(server: http.Server): Drainable {
  const connections = new Map<net.Socket, ConnectionState>();
  let closing = false;
  server.on('connection', (socket: net.Socket) => {
    // Held only while a listener of its own closes: a cluster worker has none, and a connection its
    // primary handed over just before the stop (taken a moment later: handover.ts) is served, then
    // closed once idle like the others, never kept until the time-out.
    connections.set(socket, { busy: 0, idleSince: Date.now(), res: null, held: closing && server.listening });
    socket.once('close', () => connections.delete(socket));
  });
  // Before the app's listener, which may answer synchronously.
  server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const state = connections.get(req.socket);
    if (state === undefined) return;
    state.busy += 1;
    state.res = res;
    if (stopping) res.setHeader('Connection', 'close');
    res.once('close', () => {
      state.busy -= 1;
      state.idleSince = Date.now();
      if (state.res === res) state.res = null;
    });
  });

  return {
    drain: async (timeoutMs, delayMs = 0) => {
      markStopping();
      // Answers in flight close their connection once written.
      for (const { res } of connections.values()) if (res !== null && !res.headersSent) res.setHeader('Connection', 'close');
      let listenerClosed = false;
      let allEnded: () => void = () => undefined;
      const ended = new Promise<void>((resolve) => (allEnded = resolve));
      // Checked after the poll phase (setImmediate), not in the timer's: a loop that was busy past
      // the grace must first read what its clients sent meanwhile, or a request waiting in a socket
      // would be taken for idleness and reset. A request only begun (its head not whole) does not
      // count: a client that sends a byte and goes quiet would otherwise hold every stop to its time-out.
      const poll = setInterval(() => {
        const now = Date.now();
        setImmediate(() => {
          for (const [socket, state] of connections) {
            if (state.busy === 0 && !state.held && now - state.idleSince >= IDLE_GRACE_MS) socket.destroy();
          }
          if (listenerClosed && connections.size === 0) allEnded();
        });
      }, POLL_MS);
      let timer: NodeJS.Timeout | undefined;
      try {
        if (server.listening && delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
        closing = true;
        for (const socket of await closeListener(server)) {
          // Idle from now, not from its accept: it was held, unread, while the listener closed.
          const state = connections.get(socket);
          if (state !== undefined) Object.assign(state, { held: false, idleSince: Date.now() });
          socket.resume();
        }
        listenerClosed = true;
        const timedOut = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`requests still in flight after ${timeoutMs} ms`)), timeoutMs);
        });
        await Promise.race([ended, timedOut]).catch((e: unknown) => {
          for (const socket of connections.keys()) socket.destroy();
          throw e;
        });
      } finally {
        clearInterval(poll);
        clearTimeout(timer);
      }
    },
  };
}
