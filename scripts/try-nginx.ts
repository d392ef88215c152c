/**
 * Runs nginx in the foreground with one recipe of deploy/nginx/ as shipped, on addresses of your
 * choosing, until Ctrl-C: the recipes are fragments of an nginx setup (a site needs Debian's
 * nginx.conf around it), and this is the wrapper, the one the deploy tests run too (nginx-recipes.ts).
 *
 *   npm run try-nginx -- --recipe student-info --port 8081 --upstream 8080
 *   npm run try-nginx -- --recipe round-robin --port 9210 --upstream 9211 --upstream 9212
 */
import '../src/basics/supported-node';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { type CommandLine, type CommandSpec, parseCommandLine, usageError } from '../src/basics/command-line';
import { address, isWholeConf, recipeNames, recipeText, shippedAddresses, trialFiles } from './nginx-recipes';
import { runMain } from './run-main';

const COMMAND = {
  usage: [
    'npm run try-nginx -- [--recipe NAME] [--port PORT] [--host HOST] [--upstream [HOST:]PORT]... [--dir DIR] [--nginx PATH] [--check]',
  ],
  summary: [
    'Runs nginx in the foreground with deploy/nginx/NAME.conf as shipped, listening on HOST:PORT in front of',
    'the service at each --upstream, until Ctrl-C or SIGTERM; then stops it gracefully and removes its folder.',
  ],
  options: {
    recipe: { type: 'string', value: 'NAME', help: 'student-info, student-info-vdir or round-robin (default student-info)' },
    port: { type: 'string', value: 'PORT', help: "where nginx listens (default the recipe's own: 80; 9210 for round-robin)" },
    host: { type: 'string', value: 'HOST', help: 'the address it listens on (default 127.0.0.1)' },
    upstream: {
      type: 'string',
      multiple: true,
      value: '[HOST:]PORT',
      help: "a service instance, repeated for several (default the recipe's own)",
    },
    dir: {
      type: 'string',
      value: 'DIR',
      help: 'where nginx runs: configuration, pid, logs (default a temporary folder, removed at the end)',
    },
    nginx: { type: 'string', value: 'PATH', help: 'the nginx to run (default nginx on PATH, else /usr/sbin/nginx)' },
    check: { type: 'boolean', help: 'write the configuration and check it (nginx -t), then exit' },
  },
  notes: ['exit codes: 0 stopped (or checked), 1 nginx not found or failed, 2 usage'],
} as const satisfies CommandSpec;

class UsageError extends Error {}
/** nginx is not there: not a wrong command line (exit 1, not 2). */
class NoNginx extends Error {}

interface Trial {
  recipe: string;
  listen: string;
  upstreams: string[];
  dir: string | null;
  nginx: string;
  check: boolean;
}

function findNginx(): string {
  for (const dir of [...(process.env.PATH ?? '').split(path.delimiter), '/usr/sbin', '/usr/local/sbin']) {
    const candidate = path.join(dir, 'nginx');
    if (dir !== '' && fs.existsSync(candidate)) return candidate;
  }
  throw new NoNginx('nginx not found: install it (apt-get install nginx) or name it with --nginx PATH');
}

function trialOf(values: CommandLine<typeof COMMAND>['values']): Trial {
  const recipe = values.recipe ?? 'student-info';
  if (!recipeNames().includes(recipe)) throw new UsageError(`--recipe must be one of ${recipeNames().join(', ')}, got "${recipe}"`);
  const shipped = shippedAddresses(recipeText(recipe));
  const port = values.port ?? shipped.listen.replace(/^.*:/, '');
  const given = values.host ?? '127.0.0.1';
  const host = given.includes(':') && !given.startsWith('[') ? `[${given}]` : given;
  const listen = address(`${host}:${port}`);
  if (listen === null) throw new UsageError(`--port must be a port from 1 to 65535 and --host an address, got "${host}:${port}"`);
  const upstreams = (values.upstream ?? shipped.upstreams).map((u) => {
    const a = address(u);
    if (a === null) throw new UsageError(`--upstream must be PORT or HOST:PORT, got "${u}"`);
    return a;
  });
  return { recipe, listen, upstreams, dir: values.dir ?? null, nginx: values.nginx ?? findNginx(), check: values.check === true };
}

/** Resolves once something accepts connections at `listen` (nginx bound it), or false after `ms`. */
async function accepting(listen: string, ms: number): Promise<boolean> {
  const i = listen.lastIndexOf(':');
  const [host, port] = [listen.slice(0, i).replace(/^\[|\]$/g, ''), Number(listen.slice(i + 1))];
  for (const end = Date.now() + ms; ; await new Promise((r) => setTimeout(r, 100))) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(
        { host: host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host, port },
        () => (s.destroy(), resolve(true)),
      );
      s.once('error', () => resolve(false));
    });
    if (ok) return true;
    if (Date.now() >= end) return false;
  }
}

async function main(argv: string[]): Promise<number> {
  const line = parseCommandLine(COMMAND, argv);
  if (typeof line === 'number') return line;
  let trial: Trial;
  try {
    trial = trialOf(line.values);
  } catch (e) {
    if (e instanceof NoNginx) {
      process.stderr.write(`${e.message}\n`);
      return 1;
    }
    if (e instanceof UsageError) return usageError(COMMAND, e.message);
    throw e;
  }
  const made = trial.dir === null;
  const dir = made ? fs.mkdtempSync(path.join(os.tmpdir(), 'student-info-try-nginx-')) : path.resolve(trial.dir!);
  fs.mkdirSync(dir, { recursive: true });
  const cleanUp = () => made && fs.rmSync(dir, { recursive: true, force: true });
  const files = trialFiles(trial.recipe, trial.listen, trial.upstreams, dir, 'stderr');
  // As root, nginx's workers would run as nobody, who cannot write into this folder: they keep root's rights here.
  if (process.getuid?.() === 0) files['nginx.conf'] = `user root;\n${files['nginx.conf']}`;
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
  const conf = path.join(dir, 'nginx.conf');
  const args = ['-p', dir, '-e', 'stderr', '-c', conf];
  const what = `deploy/nginx/${trial.recipe}.conf${isWholeConf(recipeText(trial.recipe)) ? '' : ' (inside an http block)'}`;
  const tested = spawnSync(trial.nginx, ['-t', ...args], { encoding: 'utf8' });
  if (tested.status !== 0) {
    process.stderr.write(`${tested.stderr}${tested.error?.message ?? ''}\nnginx -t refused ${what} (configuration in ${conf})\n`);
    cleanUp();
    return 1;
  }
  if (trial.check) {
    process.stdout.write(`nginx -t: ${what} is valid, listening on ${trial.listen} in front of ${trial.upstreams.join(', ')}\n`);
    cleanUp();
    return 0;
  }
  // Else the wait below would take another server for nginx (which would fail to bind, and say so).
  if (await accepting(trial.listen, 1)) {
    process.stderr.write(`something already listens on ${trial.listen}: choose another --port\n`);
    cleanUp();
    return 1;
  }
  const nginx = spawn(trial.nginx, args, { stdio: ['ignore', 'inherit', 'inherit'] });
  const exited = new Promise<number>((resolve) => nginx.once('exit', (code) => resolve(code ?? 0)));
  let stopping = false;
  const stop = () => {
    stopping = true;
    // SIGQUIT: nginx's graceful stop (requests under way are finished).
    nginx.kill('SIGQUIT');
  };
  process.once('SIGINT', stop).once('SIGTERM', stop).once('SIGHUP', stop);
  const up = await Promise.race([accepting(trial.listen, 10_000), exited.then(() => false)]);
  if (up) {
    process.stdout.write(
      `nginx (pid ${nginx.pid}) runs ${what}: http://${trial.listen}/ in front of ${trial.upstreams.join(', ')}; its files and logs in ${dir}${made ? ' (removed at the end)' : ''}; Ctrl-C stops it\n`,
    );
  } else if (!stopping) {
    process.stderr.write(`nginx did not listen on ${trial.listen}; stopping it\n`);
    stop();
  }
  const code = await exited;
  cleanUp();
  if (stopping && up) process.stdout.write('nginx stopped\n');
  return up && stopping ? 0 : code === 0 ? 1 : code;
}

runMain(main);
