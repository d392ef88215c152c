import type http from 'node:http';
import net from 'node:net';

/**
 * A stop that resets nothing it accepted, in Kubernetes' order: not ready first, then close.
 *
 * 1. `begin`, at the signal: readiness turns false; the port stays open and serving for the drain
 *    delay (DRAIN_DELAY_MS, server.ts and cluster.ts), while the balancers that watch readiness
 *    stop sending here.
 * 2. In the first half of the delay every answer, those in flight at the signal included, says
 *    `Connection: close`: keep-alive clients come back on a new connection (elsewhere, once their
 *    balancer has seen "not ready"). In the second half answers keep their connections: a client
 *    sent to reconnect just before the port closes is just what the kernel resets when it does
 *    (measured in docs/operations.md: 4 to 7 resets a stop for 8 keep-alive clients when every
 *    answer of the delay closed, none this way).
 * 3. `drain`: the port closes (new connections are refused), every answer from then on says
 *    `Connection: close`, requests in flight finish, and a keep-alive connection is closed only once
 *    it has answered and then been idle for IDLE_GRACE_MS with no byte of a next request received.
 */
const IDLE_GRACE_MS = 1000;
const POLL_MS = 50;

let stopping = false;

/** True from the first stop signal on: readiness is false. */
export function isStopping(): boolean {
  return stopping;
}

export function markStopping(): void {
  stopping = true;
}

interface ConnectionState {
  busy: number;
  idleSince: number;
  /** socket.bytesRead when the last answer ended: more since then is a next request arriving. */
  readAtIdle: number;
  /** The answer being written, while busy. */
  res: http.ServerResponse | null;
}

export interface Drainable {
  /** Not ready; answers close their connections for `closeForMs` (half the drain delay). */
  begin(closeForMs: number): void;
  /**
   * Stops accepting (when listening), makes every answer close its connection, and resolves once
   * every connection has ended, or rejects after timeoutMs (cutting the rest). A server fed
   * connections by a cluster primary has no listener of its own.
   */
  drain(timeoutMs: number): Promise<void>;
}

export function drainable(server: http.Server): Drainable {
  const connections = new Map<net.Socket, ConnectionState>();
  server.on('connection', (socket: net.Socket) => {
    connections.set(socket, { busy: 0, idleSince: Date.now(), readAtIdle: 0, res: null });
    socket.once('close', () => connections.delete(socket));
  });
  // Before the app's listener, which may answer synchronously.
  server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const state = connections.get(req.socket);
    if (state === undefined) return;
    state.busy += 1;
    state.res = res;
    if (closeAnswers) res.setHeader('Connection', 'close');
    res.once('close', () => {
      state.busy -= 1;
      state.idleSince = Date.now();
      state.readAtIdle = req.socket.bytesRead;
      if (state.res === res) state.res = null;
    });
  });

  let closeAnswers = false;
  let draining = false;
  const closeAnswersNow = () => {
    closeAnswers = true;
    for (const { res } of connections.values()) if (res !== null && !res.headersSent) res.setHeader('Connection', 'close');
  };

  const idle = (socket: net.Socket, state: ConnectionState, now: number) =>
    state.busy === 0 && now - state.idleSince >= IDLE_GRACE_MS && socket.bytesRead === state.readAtIdle;

  return {
    begin: (closeForMs) => {
      markStopping();
      closeAnswersNow();
      setTimeout(() => (closeAnswers = draining), closeForMs).unref();
    },
    drain: (timeoutMs) =>
      new Promise<void>((resolve, reject) => {
        markStopping();
        // Answers in flight, and all to come, close their connection once written.
        draining = true;
        closeAnswersNow();
        // net.Server's close, not http.Server's: the latter closes idle keep-alive connections at once.
        if (server.listening) net.Server.prototype.close.call(server);
        const timer = setTimeout(() => {
          clearInterval(poll);
          for (const socket of connections.keys()) socket.destroy();
          reject(new Error(`requests still in flight after ${timeoutMs} ms`));
        }, timeoutMs);
        const poll = setInterval(() => {
          const now = Date.now();
          for (const [socket, state] of connections) if (idle(socket, state, now)) socket.destroy();
          if (connections.size === 0 && !server.listening) {
            clearInterval(poll);
            clearTimeout(timer);
            resolve();
          }
        }, POLL_MS);
      }),
  };
}
