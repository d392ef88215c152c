import type net from 'node:net';
import { flushLog } from '../basics/log';

/** The settings that place a listener, named in the line a failed start writes. */
export interface ListenerSettings {
  host: string;
  port: string;
}
export const SERVICE_LISTENER: ListenerSettings = { host: 'HOST', port: 'PORT' };
export const ADMIN_LISTENER: ListenerSettings = { host: 'ADMIN_HOST', port: 'ADMIN_PORT' };

/** What a second instance on one machine must change: every listener's port (README, operations.md). */
const SECOND_INSTANCE = 'a second instance on this machine needs its own PORT and ADMIN_PORT (ADMIN_PORT=0: no admin listener)';

/** Listens, resolving with the bound port (the real one when asked for port 0). */
function listen(server: net.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : port);
    });
  });
}

/** One line saying which setting to change, for the reasons a listener cannot open that an operator can fix. */
export function cannotListen(error: NodeJS.ErrnoException, host: string, port: number, settings: ListenerSettings): string {
  switch (error.code) {
    case 'EADDRINUSE':
      return `port ${port} is in use on ${host} (${settings.port}): another process listens there; ${SECOND_INSTANCE}`;
    case 'EACCES':
      return port < 1024
        ? `port ${port} on ${host} may not be opened by this user (${settings.port}): a port below 1024 needs root or CAP_NET_BIND_SERVICE; or listen from 1024 up behind the proxy`
        : `port ${port} on ${host} may not be opened by this user (${settings.host}, ${settings.port})`;
    case 'EADDRNOTAVAIL':
      return `${host} is not an address of this machine (${settings.host})`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `${host} is not a host name this machine can resolve (${settings.host})`;
    default:
      return `cannot listen on ${host}:${port} (${settings.host}, ${settings.port}): ${error.message}`;
  }
}

/**
 * Ends a start that cannot go on: the log lines already written come first, then one line saying
 * why as the last (nothing after it claims to listen), and exit code 1.
 */
export async function exitStart(line: string): Promise<never> {
  await flushLog();
  process.stderr.write(`error: ${line}\n`);
  process.exit(1);
}

/**
 * Listens, resolving with the bound port (the real one for port 0), or ends the process with one
 * line naming the settings to change.
 */
export async function listenOrExit(server: net.Server, port: number, host: string, settings: ListenerSettings): Promise<number> {
  try {
    return await listen(server, port, host);
  } catch (e) {
    return exitStart(cannotListen(e as NodeJS.ErrnoException, host, port, settings));
  }
}
