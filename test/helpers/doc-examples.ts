import fs from 'node:fs';
import path from 'node:path';

/**
 * The code blocks of the documentation and what each is: an example a test runs, one marked as not
 * run, or a sample by its language. The marker is an HTML comment on the line just above the fence,
 * invisible on GitHub:
 *
 *   <!-- example: readme-curl -->       run by test/doc-examples.test.ts under that name
 *   <!-- not run: why not -->           shown, never run (why: a placeholder host, twenty minutes ...)
 *
 * A fence in one of SAMPLE_LANGUAGES (output, log lines, a diagram) needs no marker; any other one
 * (sh, js, json ...) needs one, and a fence without a language is refused: a reader cannot tell
 * whether to run it.
 */
export const SAMPLE_LANGUAGES = ['text', 'mermaid'];

export interface CodeBlock {
  file: string;
  /** Line of the opening fence, 1-based. */
  line: number;
  /** The info string's first word ('' for none). */
  lang: string;
  /** `example`, `not run` or null, from the comment above the fence. */
  marker: { kind: 'example'; name: string } | { kind: 'not run'; why: string } | null;
  /** The lines between the fences, the fence's own indentation taken off, joined with \n and ending with one. */
  text: string;
}

const MARKER = /^\s*<!--\s*(example|not run):\s*(.*?)\s*-->\s*$/;

/** Every fenced block of one Markdown text, in order. */
export function codeBlocks(file: string, text: string): CodeBlock[] {
  const lines = text.split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/.exec(lines[i]!);
    if (open === null) continue;
    const [, indent, fence, lang] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !new RegExp(`^\\s*${fence![0]}{${fence!.length},}\\s*$`).test(lines[j]!); j += 1) {
      body.push(lines[j]!.startsWith(indent!) ? lines[j]!.slice(indent!.length) : lines[j]!.trimStart());
    }
    const m = i > 0 ? MARKER.exec(lines[i - 1]!) : null;
    const marker =
      m === null ? null : m[1] === 'example' ? { kind: 'example' as const, name: m[2]! } : { kind: 'not run' as const, why: m[2]! };
    blocks.push({ file, line: i + 1, lang: lang!, marker, text: body.length === 0 ? '' : `${body.join('\n')}\n` });
    i = j;
  }
  return blocks;
}

/** The blocks of README.md and docs/*.md under root. */
export function documentedBlocks(root: string): CodeBlock[] {
  const docs = fs
    .readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  return ['README.md', ...docs].flatMap((file) => codeBlocks(file, fs.readFileSync(path.join(root, file), 'utf8')));
}

/** What is wrong with the blocks' marking, as `file:line: why`: blocks neither run nor marked, bad markers, names used twice. */
export function markingProblems(blocks: CodeBlock[]): string[] {
  const problems: string[] = [];
  const seen = new Map<string, CodeBlock>();
  for (const b of blocks) {
    const at = `${b.file}:${b.line}`;
    if (b.lang === '') problems.push(`${at}: a fence without a language (text for output, sh or js for what runs)`);
    else if (b.marker === null && !SAMPLE_LANGUAGES.includes(b.lang))
      problems.push(`${at}: a ${b.lang} block neither run (<!-- example: NAME -->) nor marked <!-- not run: why -->`);
    if (b.marker?.kind === 'example') {
      if (!/^[a-z0-9]+(-[a-z0-9]+)*$/.test(b.marker.name))
        problems.push(`${at}: example name '${b.marker.name}' is not lower-case-with-hyphens`);
      const first = seen.get(b.marker.name);
      if (first !== undefined) problems.push(`${at}: example name '${b.marker.name}' already used at ${first.file}:${first.line}`);
      seen.set(b.marker.name, b);
    }
    if (b.marker?.kind === 'not run' && b.marker.why === '') problems.push(`${at}: <!-- not run: --> says why not`);
  }
  return problems;
}

/** The examples by name. */
export function examplesByName(blocks: CodeBlock[]): Map<string, CodeBlock> {
  return new Map(blocks.flatMap((b) => (b.marker?.kind === 'example' ? [[b.marker.name, b] as const] : [])));
}

/**
 * A shell block cut into its commands: a command runs from its first line that is not a comment to
 * the last line of its run of non-blank lines (so `\` continuations stay whole); the comment lines
 * just above it are its title.
 */
export function shellCommands(text: string): Array<{ title: string; command: string }> {
  return text
    .split(/\n\s*\n/)
    .map((part) => part.split('\n').filter((l) => l.trim() !== ''))
    .filter((part) => part.length > 0)
    .map((part) => {
      const title = part.filter((l, i) => /^\s*#/.test(l) && part.slice(0, i).every((p) => /^\s*#/.test(p)));
      return { title: title.map((l) => l.replace(/^\s*#\s?/, '')).join(' '), command: `${part.slice(title.length).join('\n')}\n` };
    });
}
