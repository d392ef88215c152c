import { meantSetting } from './near-miss';

/**
 * The lines of a `.env` file that Node's own parser (`process.loadEnvFile`, `util.parseEnv`, the
 * rules of the dotenv package: `export`, quotes, `#` comments, a quoted value over several lines)
 * drops or reads otherwise than it looks, each said with its line number: `PORT 19215` and
 * `SMS_GATEWAY: log` are skipped by the parser without a word, so their settings keep their
 * defaults. The values are read by Node's parser itself; this only follows its rules far enough to
 * know which lines it consumed. No value is ever shown (a line may hold a secret): a line is named
 * by its number, and by its first word only when that word is a setting's name or close to one.
 */

/** What a shell (and every tool after it) takes for a variable's name. */
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** A line that reads as a setting: what a quote left open would swallow. */
const LOOKS_LIKE_SETTING = /^\s*(?:export\s+)?[A-Za-z_][A-Za-z0-9_]*\s*=/;
const QUOTES = ['"', "'", '`'];

/** The setting a line that sets nothing begins with (its first word, or one close to it), or null. */
function settingBegun(line: string, known: readonly string[]): { word: string; setting: string } | null {
  const word = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)(?=[\s:]|$)/.exec(line)?.[1];
  const setting = word === undefined ? null : known.includes(word) ? word : meantSetting(word, known);
  return setting === null ? null : { word: word!, setting };
}

/** The line for a line that sets nothing: by its first word when that is a setting (`PORT 19215`, `SMS_GATEWAY: log`), else by `why`. */
function ignored(at: string, line: string, known: readonly string[], why: string): string {
  const begun = settingBegun(line, known);
  if (begun === null) return `${at} is ignored: ${why}`;
  const hint = begun.setting === begun.word ? `a setting is written ${begun.setting}=value` : `did you mean ${begun.setting}=value?`;
  return `${at} is ignored: no "=" after ${begun.word} (${hint})`;
}

/**
 * One line for each line of `text` (the content of `file`) that sets nothing although it is neither
 * blank nor a comment, or that sets something other than it seems to. `known`: the settings' names.
 */
export function envFileWarnings(text: string, file: string, known: readonly string[]): string[] {
  // Node drops every carriage return before it reads: CRLF files read as LF ones.
  const lines = text.replace(/\r/g, '').split('\n');
  const warnings: string[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i]!;
    const at = `${file} line ${i + 1}`;
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const equals = line.indexOf('=');
    if (equals === -1) {
      warnings.push(ignored(at, line, known, 'it is neither NAME=value, a comment (#) nor blank'));
      continue;
    }
    let name = line.slice(0, equals).trim();
    if (name.startsWith('export ')) name = name.slice('export '.length).trim();
    if (name === '') {
      warnings.push(`${at} is ignored: it has no name before "="`);
      continue;
    }
    if (!NAME.test(name)) {
      warnings.push(
        ignored(at, line, known, 'the name before "=" is not a variable name (letters, digits and _, not starting with a digit)'),
      );
      continue;
    }
    const value = line.slice(equals + 1).trim();
    const quote = value[0];
    if (quote === undefined || !QUOTES.includes(quote)) continue;
    // The parser looks for the closing quote across lines: a value may span several.
    const close = value.indexOf(quote, 1);
    if (close !== -1) {
      const after = value.slice(close + 1).trim();
      if (after !== '' && !after.startsWith('#')) warnings.push(`${at}: the text after ${name}'s closing ${quote} is ignored`);
      continue;
    }
    const last = lines.findIndex((l, j) => j > i && l.includes(quote));
    if (last === -1) {
      warnings.push(`${at}: ${name}'s value opens a ${quote} that is never closed, so the ${quote} is read as part of the value`);
      continue;
    }
    const swallowed = lines.slice(i + 1, last + 1).flatMap((l, k) => (LOOKS_LIKE_SETTING.test(l) ? [i + 2 + k] : []));
    if (swallowed.length > 0) {
      const which = swallowed.length === 1 ? `line ${swallowed[0]} is` : `lines ${swallowed.join(', ')} are`;
      warnings.push(
        `${at}: ${name}'s value opens a ${quote} closed only on line ${last + 1}, so ${which} part of the value, not settings (a closing ${quote} missing?)`,
      );
    }
    i = last;
  }
  return warnings;
}
