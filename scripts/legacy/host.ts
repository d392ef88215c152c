import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/basics/paths';
import { ask } from './ask';
import type { Configuration } from './matrix';

/**
 * A legacy ASMX host (scripts/legacy-host/start.sh: Mono's System.Web.Services) started for one
 * configuration of the matrix and stopped after it.
 */

/** LEGACY_HOST_DIR, else the project's own copy (scripts/legacy-host/). */
export function legacyHostDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.LEGACY_HOST_DIR || path.join(projectRoot, 'scripts', 'legacy-host');
}

export interface LegacyHost {
  /** The application's base URL, its virtual directory included, without a trailing slash. */
  base: string;
  stop(): Promise<void>;
}

/** Starts the host and resolves once it answers an HTTP request (any status: some configurations refuse ?wsdl). */
export async function startLegacyHost(dir: string, config: Configuration, port: number, timeoutMs = 60000): Promise<LegacyHost> {
  const script = path.join(dir, 'start.sh');
  if (!fs.existsSync(script)) throw new Error(`no legacy host at ${dir} (set LEGACY_HOST_DIR)`);
  const env = { ...process.env, XML_NAMESPACE: config.namespace, PROTOCOLS: config.protocols };
  // start.sh execs mono: this child is the host, and stopping it stops the host.
  const child: ChildProcess = spawn('bash', [script, String(port), config.virtualDir || '/'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let gone = false;
  void exited.then(() => (gone = true));
  const base = `http://127.0.0.1:${port}${config.virtualDir}`;
  const stop = async () => {
    if (!gone) child.kill('SIGTERM');
    await exited;
  };
  const probe = { name: 'probe', method: 'GET', path: '/AboutUs.asmx/GetAboutUs', headers: {}, kind: 'full' as const };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (gone) throw new Error(`the legacy host for ${config.name} exited: ${output.trim()}`);
    const a = await ask(base, probe, true, 5000);
    if (!a.error) return { base, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the legacy host for ${config.name} did not answer within ${timeoutMs} ms: ${output.trim()}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}
