import fs from 'node:fs';
import path from 'node:path';

/**
 * The anchor GitHub gives a heading (github-slugger): lower case, markup and punctuation dropped but
 * for `-` and `_`, each space a hyphen; a repeated heading gets -1, -2 ... in the order met.
 */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link keeps its text
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/[`*]/g, '');
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The lines of a Markdown file outside fenced code blocks, with their numbers (1-based). */
function proseLines(text: string): Array<[number, string]> {
  const out: Array<[number, string]> = [];
  let fence: string | null = null;
  text.split('\n').forEach((line, i) => {
    const opener = /^\s*(`{3,}|~{3,})/.exec(line);
    if (opener) {
      if (fence === null) fence = opener[1][0];
      else if (opener[1][0] === fence) fence = null;
      return;
    }
    if (fence === null) out.push([i + 1, line]);
  });
  return out;
}

/** Every anchor a Markdown file offers: its headings' slugs and explicit `<a id>` / `<a name>`. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, line] of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = slug(heading[1]);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]);
  }
  return anchors;
}

export interface Link {
  file: string;
  line: number;
  target: string;
}

/** The relative links and images of a Markdown file, code spans and fenced blocks left out. */
export function linksOf(file: string, text: string): Link[] {
  const links: Link[] = [];
  for (const [n, raw] of proseLines(text)) {
    const line = raw.replace(/(`+)(?:(?!\1).)*?\1/g, '');
    const found = [
      ...[...line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]),
      ...[...line.matchAll(/^\s*\[[^\]]+\]:\s*(\S+)/g)].map((m) => m[1]),
    ];
    for (const target of found) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto: ...
      links.push({ file, line: n, target });
    }
  }
  return links;
}

/** What is wrong with each link that does not resolve, as `file:line: target: why`. */
export function brokenLinks(root: string, files: string[]): string[] {
  const anchorCache = new Map<string, Set<string>>();
  const anchors = (file: string) => {
    let set = anchorCache.get(file);
    if (!set) anchorCache.set(file, (set = anchorsOf(fs.readFileSync(file, 'utf8'))));
    return set;
  };
  const problems: string[] = [];
  for (const file of files) {
    const abs = path.resolve(root, file);
    for (const link of linksOf(file, fs.readFileSync(abs, 'utf8'))) {
      const hash = link.target.indexOf('#');
      const rel = decodeURIComponent(hash < 0 ? link.target : link.target.slice(0, hash));
      const anchor = hash < 0 ? null : decodeURIComponent(link.target.slice(hash + 1));
      const dest = rel === '' ? abs : path.resolve(path.dirname(abs), rel);
      const where = `${link.file}:${link.line}: ${link.target}`;
      if (
        !path
          .relative(root, dest)
          .split(path.sep)
          .every((part) => part !== '..')
      ) {
        problems.push(`${where}: leaves the repository`);
      } else if (!fs.existsSync(dest)) {
        problems.push(`${where}: no such file`);
      } else if (anchor !== null) {
        if (!dest.endsWith('.md')) problems.push(`${where}: an anchor into a file that is not Markdown`);
        else if (!anchors(dest).has(anchor)) problems.push(`${where}: no heading or anchor #${anchor} there`);
      }
    }
  }
  return problems;
}

const TOP = /^(?:src|scripts|test|deploy|docs|wsdl|demo)\//;

/** Every file under the folders of the repository's code, as paths from its root. */
function codeFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    if (!fs.existsSync(path.join(root, dir))) return;
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else out.push(rel);
    }
  };
  for (const top of ['src', 'scripts', 'test']) walk(top);
  return out;
}

/**
 * The files and folders of the repository a Markdown file names in code spans that do not exist: a
 * page naming a file that moved. A name from the root (`src/app/index.ts`, `deploy/nginx/`) must be
 * there; a shorter one (`app/index.ts`, `gateways/http.ts`) must end the path of a file of src/,
 * scripts/ or test/; a file of the build (`dist/src/main.js`) must have its source. Globs and
 * placeholders are not names of files.
 */
export function missingPaths(root: string, files: string[]): string[] {
  const code = codeFiles(root).map((f) => `/${f}`);
  const problems: string[] = [];
  for (const file of files) {
    for (const [n, line] of proseLines(fs.readFileSync(path.resolve(root, file), 'utf8'))) {
      for (const m of line.matchAll(/`([^`\s]+)`/g)) {
        const named = m[1].replace(/[.,;:]+$/, '');
        if (/[*<>{}$]|\.\.\.|FILE|NAME/.test(named) || named.startsWith('node_modules/')) continue;
        // Build output is named by its source: dist/src/main.js is src/main.ts compiled.
        const name = /^(?:dist|\.dev-build)\/.+\.js$/.test(named) ? named.replace(/^[^/]+\//, '').replace(/\.js$/, '.ts') : named;
        const known = TOP.test(name)
          ? fs.existsSync(path.join(root, name))
          : !/^[\w-]+\/[\w./-]*\.(?:ts|js)$/.test(name) || code.some((f) => f.endsWith(`/${name}`));
        if (!known) problems.push(`${file}:${n}: ${named}`);
      }
    }
  }
  return problems;
}

/** The Markdown files whose links are checked: the README, docs/ and the deployment recipes' notes. */
export function markdownFiles(root: string): string[] {
  const out = ['README.md'];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.md')) out.push(rel);
    }
  };
  walk('docs');
  walk('deploy');
  return out;
}
