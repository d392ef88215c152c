import fs from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../src/basics/paths';

/**
 * The nginx recipes of deploy/nginx/ made into a whole nginx.conf that runs as shipped, on addresses
 * of the caller's choosing: `npm run try-nginx` (try-nginx.ts) and the deploy tests both run what
 * this makes, so what an operator tries is what the tests prove. Only the recipe's `listen`, its
 * upstream's `server` lines and its log folder change; a recipe whose lines are not found is refused,
 * never run half-changed.
 *
 * Two kinds of recipe: a site (student-info.conf, student-info-vdir.conf), what goes in
 * /etc/nginx/sites-enabled/, which runs inside the http block of Debian's nginx.conf (given here:
 * `siteWrapper`); and a whole nginx.conf (round-robin.conf), run with the trial's folder as its
 * prefix (`nginx -p`), where its relative paths (pid, logs, temporary files) go.
 */

export const RECIPES_DIR = path.join(projectRoot, 'deploy', 'nginx');

/** The recipes by name: the file names of deploy/nginx/ without `.conf`. */
export function recipeNames(): string[] {
  return fs
    .readdirSync(RECIPES_DIR)
    .filter((f) => f.endsWith('.conf'))
    .map((f) => f.slice(0, -'.conf'.length))
    .sort();
}

export function recipeText(name: string): string {
  return fs.readFileSync(path.join(RECIPES_DIR, `${name}.conf`), 'utf8');
}

/** A whole nginx.conf has its own http block; a site goes inside one. */
export const isWholeConf = (text: string): boolean => /^\s*http\s*\{/m.test(text);

const LISTEN = /^([ \t]*)listen[ \t]+([^;\s]+);/m;
/** A `server` line of an upstream block, with its parameters, and its line end. */
const SERVER = /^([ \t]*)server[ \t]+([^;\s]+)((?:[ \t]+[^;\s]+)*);[ \t]*\n?/gm;

/** `PORT` or `HOST:PORT` (`[v6]:PORT`) as nginx writes an address; loopback when no host is given. */
export function address(value: string): string | null {
  const m = /^(?:(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):)?(\d{1,5})$/.exec(value.trim());
  if (m === null || Number(m[2]) < 1 || Number(m[2]) > 65535) return null;
  return `${m[1] ?? '127.0.0.1'}:${m[2]}`;
}

/** What a recipe listens on and proxies to as shipped (for the usage, and as defaults). */
export function shippedAddresses(text: string): { listen: string; upstreams: string[] } {
  const listen = LISTEN.exec(text)?.[2];
  const upstreams = [...upstreamBlock(text).body.matchAll(SERVER)].map((m) => m[2]!);
  if (listen === undefined || upstreams.length === 0)
    throw new Error('the recipe has no `listen` line or no `server` line in its upstream block');
  return { listen, upstreams };
}

function upstreamBlock(text: string): { start: number; body: string } {
  const open = /^\s*upstream\s+\w+\s*\{/m.exec(text);
  if (open === null) throw new Error('the recipe has no upstream block');
  const start = open.index + open[0].length;
  const end = text.indexOf('}', start);
  return { start, body: text.slice(start, end) };
}

/**
 * The recipe with nginx listening on `listen` and its upstream's servers being `upstreams`, each
 * with the parameters the recipe's first server line has (round-robin.conf's max_fails and
 * fail_timeout), in the place of the recipe's own; its access logs in `dir`.
 */
export function placed(text: string, listen: string, upstreams: readonly string[], dir: string): string {
  const listenLine = LISTEN.exec(text);
  if (listenLine === null) throw new Error('the recipe has no `listen` line');
  let out = text.replace(LISTEN, `$1listen ${listen};`);
  const block = upstreamBlock(out);
  const servers = [...block.body.matchAll(SERVER)];
  if (servers.length === 0) throw new Error('the recipe has no `server` line in its upstream block');
  const [, indent, , params] = servers[0]!;
  const lines = upstreams.map((u) => `${indent}server ${u}${params};\n`).join('');
  // The first server line becomes the new ones, the others go: the block keeps its comments and settings.
  let seen = 0;
  const body = block.body.replace(SERVER, () => (seen++ === 0 ? lines : ''));
  out = out.slice(0, block.start) + body + out.slice(block.start + block.body.length);
  return out.replaceAll('/var/log/nginx/', `${dir}/`);
}

/**
 * A site inside the main configuration /etc/nginx/nginx.conf would be, with Debian's access log (the
 * combined format, every request line in full) for the site to inherit or replace, and `error_log`
 * where the caller wants nginx's errors (a file, or `stderr`).
 */
export function siteWrapper(dir: string, errorLog: string): string {
  return [
    'worker_processes 1;',
    'daemon off;',
    `pid ${dir}/nginx.pid;`,
    `error_log ${errorLog};`,
    'events {}',
    'http {',
    `  access_log ${dir}/access.log;`,
    ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${dir}/${t};`),
    `  include ${dir}/site.conf;`,
    '}',
    '',
  ].join('\n');
}

/** The files to run recipe `name` from `dir` (nginx -p dir -c dir/nginx.conf): nginx.conf, and site.conf for a site. */
export function trialFiles(
  name: string,
  listen: string,
  upstreams: readonly string[],
  dir: string,
  errorLog: string,
): Record<string, string> {
  const text = recipeText(name);
  if (isWholeConf(text)) return { 'nginx.conf': placed(text, listen, upstreams, dir) };
  return { 'nginx.conf': siteWrapper(dir, errorLog), 'site.conf': placed(text, listen, upstreams, dir) };
}
