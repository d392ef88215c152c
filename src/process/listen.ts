import type net from 'node:net';

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

/**
 * Listens, resolving with the bound port (the real one for port 0), or ends the process with one
 * line naming the settings (`settings`: e.g. "HOST, PORT").
 */
export async function listenOrExit(server: net.Server, port: number, host: string, settings: string): Promise<number> {
  try {
    return await listen(server, port, host);
  } catch (e) {
    process.stderr.write(`error: cannot listen on ${host}:${port} (${settings}): ${(e as Error).message}\n`);
    process.exit(1);
  }
}
