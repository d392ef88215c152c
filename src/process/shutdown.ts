import type http from 'node:http';
import net from 'node:net';

/**
 * Graceful stop of an HTTP server without failing a request: the listener stops accepting, requests
 * in flight finish, each answer from then on carries `Connection: close`, and a keep-alive connection
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
}

export interface Drainable {
  /**
   * Stops accepting (when listening) and resolves once every connection has ended, or rejects after
   * timeoutMs. A server fed connections by a cluster primary has no listener of its own.
   */
  drain(timeoutMs: number): Promise<void>;
}

export function drainable(server: http.Server): Drainable {
  const connections = new Map<net.Socket, ConnectionState>();
  server.on('connection', (socket: net.Socket) => {
    connections.set(socket, { busy: 0, idleSince: Date.now(), res: null });
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
    drain: (timeoutMs) =>
      new Promise<void>((resolve, reject) => {
        markStopping();
        // Answers in flight close their connection once written.
        for (const { res } of connections.values()) if (res !== null && !res.headersSent) res.setHeader('Connection', 'close');
        // net.Server's close, not http.Server's: the latter closes idle keep-alive connections at once.
        if (server.listening) net.Server.prototype.close.call(server);
        const timer = setTimeout(() => {
          clearInterval(poll);
          for (const socket of connections.keys()) socket.destroy();
          reject(new Error(`requests still in flight after ${timeoutMs} ms`));
        }, timeoutMs);
        const poll = setInterval(() => {
          const now = Date.now();
          for (const [socket, state] of connections) {
            if (state.busy === 0 && now - state.idleSince >= IDLE_GRACE_MS) socket.destroy();
          }
          if (connections.size === 0 && !server.listening) {
            clearInterval(poll);
            clearTimeout(timer);
            resolve();
          }
        }, POLL_MS);
      }),
  };
}
