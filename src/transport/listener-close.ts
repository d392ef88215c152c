import net from 'node:net';

/**
 * Closing a listening socket makes the kernel reset every connection it had completed but the process
 * had not yet taken (the accept queue): clients whose connect succeeded, and who may have sent their
 * request, read ECONNRESET. A busy event loop leaves tens of them queued under a steady load. So a
 * listener closes in two steps. First, connections are still taken but held: paused, nothing read,
 * no work done for them, so the event loop only accepts and the queue stays empty. Once none has
 * arrived for QUIET_MS (clients waiting on a held connection send nothing new), or after HOLD_MAX_MS
 * (clients that keep opening connections regardless), the listener closes with an empty queue, and
 * the held connections are given back to be served like any other.
 *
 * A connect made after the close is refused, which balancers and clients retry on another instance.
 *
 * Timers run before the poll phase that accepts: a loop busy for longer than QUIET_MS (answers still
 * being written, a machine short of processor) finds its quiet timer due with connections still in
 * the queue. So the decision is taken after one more poll (setImmediate runs after it): connections
 * accepted there are held too, and the quiet wait starts again; after HOLD_MAX_MS it closes then.
 */
const QUIET_MS = 50;
export const HOLD_MAX_MS = 1000;

/** net.Server reads this own property at each accept (`pauseOnConnect` of its options). */
type Pausable = net.Server & { pauseOnConnect: boolean };

/**
 * Closes `server`'s listener (net.Server's close: an http.Server's own would also close idle keep-alive
 * connections at once) and resolves with the connections held meanwhile, paused: the caller serves
 * them (resume(), or hands them on). The server's own 'connection' listeners have seen them.
 */
export async function closeListener(server: net.Server): Promise<net.Socket[]> {
  if (!server.listening) return [];
  const held: net.Socket[] = [];
  const pausable = server as Pausable;
  const paused = pausable.pauseOnConnect;
  pausable.pauseOnConnect = true;
  await new Promise<void>((resolve) => {
    let longest = false;
    let closed = false;
    const quiet = setTimeout(afterPoll, QUIET_MS);
    const most = setTimeout(() => {
      longest = true;
      afterPoll();
    }, HOLD_MAX_MS);
    function onConnection(socket: net.Socket): void {
      held.push(socket);
      quiet.refresh();
    }
    function afterPoll(): void {
      const seen = held.length;
      setImmediate(() => {
        if (closed) return; // both timers came due in one turn
        if (longest || held.length === seen) done();
        else quiet.refresh();
      });
    }
    function done(): void {
      closed = true;
      clearTimeout(quiet);
      clearTimeout(most);
      server.off('connection', onConnection);
      net.Server.prototype.close.call(server);
      resolve();
    }
    server.on('connection', onConnection);
  });
  pausable.pauseOnConnect = paused;
  return held;
}
