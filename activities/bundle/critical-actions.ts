/**
 * Runs an agent's critical actions at initialisation, as the execution spec describes: file loads
 * become `[Critical Action] Loaded file: <path>` system messages (a config's keys become variables
 * for every later action), everything else becomes a `[Critical Instruction] <text>` message with
 * the variables known so far filled in. Only files named by critical actions are read here;
 * workflows, templates and instructions are left for the model to load through tools.
 *
 * What counts as a load (decided from the real BMAD files):
 * - a line of the instruction that starts with the verb "Load" (after list markers, emoji, or a
 *   `CRITICAL:`-style label) and names at least one file: "Load into memory {path} and set
 *   variables: a, b", "... set variable a, b", "... set variables", "Load COMPLETE file {path} into
 *   permanent memory", a compiled step's "- Load and read {path} NOW";
 * - a file is a token starting with a `{variable}` or a relative path with a known extension; a
 *   token ending in `/` is a folder ("Load the referenced fragment(s) from `{...}/knowledge/`"
 *   is guidance for later, not a load), and the names after "set variable(s)" are not paths;
 * - "Load persona from this current agent file" names no file, so it stays an instruction.
 *
 * A loaded `.yaml`/`.yml` file is a config when its name is `config.yaml`/`config.yml` or the
 * instruction says "set variable(s)"; all its top-level scalar keys become variables (the list
 * after "set variables" is informational: real agents list keys their config lacks). The same file
 * named twice is loaded once. A file that cannot be loaded (missing, outside the roots, too big,
 * a config that does not parse, a path with an unknown variable) throws `CriticalActionError`.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { SystemMessage } from '../../common/messages';
import type { AgentDefinition } from './agent-schema';
import type { BundleInfo } from './bundle-loader';
import { BundleError, CriticalActionError, inFile } from './errors';
import { guardRead } from './path-guard';
import { parseYamlSafe } from './safe-yaml';
import { resolveConfigVariables, resolveVariables } from './variables';

/** What critical actions need besides the agent. */
export interface CriticalActionContext {
  bundle: BundleInfo;
  /** The agent file (absolute); kept for error reports. */
  agentFile: string;
  /** Variables known before the first action: the path variables, usually. */
  variables: Record<string, string>;
  /** Value of `{date}` (default today). */
  date?: string;
  /** Largest file a critical action may load, in bytes (default: no limit beyond memory). */
  maxReadBytes?: number;
}

/** Messages for the model's context and the variables known after the last action. */
export interface CriticalActionResult {
  messages: SystemMessage[];
  variables: Record<string, string>;
  /** The first config file loaded, if any (also `{config_source}` in `variables`). */
  configPath?: string;
  /** Real paths of the files loaded, in order, without repeats. */
  loadedFiles: string[];
}

// Every pattern here runs in linear time: the line prefix and the path tokens are scanned by hand
// (see `loadLineRest` and `pathTokens`), since their natural regular expressions backtrack
// exponentially (30 `!` took seconds) or quadratically (a 100,000-character word took 9 s).
const SET_VARIABLES = /\bset\s+variables?\b|\bsession variables\b/i;
const AND_SET_VARIABLES = /\band\s+set\s+variables?\b/i;

/**
 * The files an instruction asks to load, as written (variables unresolved); empty when it is not a
 * load instruction. Exported for `inspect`/`validate` and tests. Linear in the instruction's length.
 */
export function fileLoadTargets(instruction: string): string[] {
  const targets = new Set<string>();
  for (const line of instruction.split(/\r\n?|[\n\u2028\u2029]/)) {
    const after = loadLineRest(line);
    if (after === undefined) continue;
    // Only what comes before "and set variable(s)" can be a file; after it are variable names.
    const rest = after.split(AND_SET_VARIABLES)[0];
    for (const raw of pathTokens(rest)) {
      const token = trimEndChars(raw, '.:!?');
      if (token.endsWith('/')) continue;
      const isPath = token.includes('/') || hasExtension(token) || token === '{config_source}';
      if (isPath) targets.add(token);
    }
  }
  return [...targets];
}

/**
 * What follows the verb when `line` is a load line, else `undefined`. A load line is: list markers,
 * numbering and spaces (`- `, `1. `, `> `), then any symbols and spaces (emoji, `**`), then
 * optionally an upper-case label ending in a colon (`CRITICAL:`), then the word "load" (any case).
 */
function loadLineRest(line: string): string | undefined {
  const n = line.length;
  let i = 0;
  while (i < n && isListMarker(line[i])) i++;
  while (i < n) {
    const cp = line.codePointAt(i) as number;
    const ch = String.fromCodePoint(cp);
    if (ch === '{' || LETTER_OR_NUMBER.test(ch)) break;
    i += ch.length;
  }
  if (i >= n || !isAsciiLetter(line[i])) return undefined;
  // A label: letters and spaces up to a colon, then spaces, then the verb.
  let j = i;
  while (j < n && (isAsciiLetter(line[j]) || line[j] === ' ')) j++;
  if (line[j] === ':') {
    let k = j + 1;
    while (k < n && WHITESPACE.test(line[k])) k++;
    if (isWordAt(line, k, 'load')) return line.slice(k + 4);
  }
  return isWordAt(line, i, 'load') ? line.slice(i + 4) : undefined;
}

const LETTER_OR_NUMBER = /^[\p{L}\p{N}]$/u;
const WHITESPACE = /^\s$/;

function isListMarker(ch: string): boolean {
  return WHITESPACE.test(ch) || '-*•>#.)'.includes(ch) || (ch >= '0' && ch <= '9');
}

function isAsciiLetter(ch: string | undefined): boolean {
  return ch !== undefined && ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'));
}

/** An ASCII word character, as `\w` in a regular expression. */
function isWordChar(ch: string | undefined): boolean {
  return ch !== undefined && (isAsciiLetter(ch) || (ch >= '0' && ch <= '9') || ch === '_');
}

/** Whether `word` (lower-case) stands at `at` in `text`, in any case, not followed by a word character. */
function isWordAt(text: string, at: number, word: string): boolean {
  return text.slice(at, at + word.length).toLowerCase() === word && !isWordChar(text[at + word.length]);
}

/** Characters that end a `{variable}...` token, besides white space. */
const TOKEN_END = '`\'"<>,;()';
const EXTENSIONS = ['yaml', 'yml', 'md', 'xml', 'csv', 'json', 'txt'];

/**
 * The path-like tokens of `text`, left to right, not overlapping:
 * - a `{variable}` followed by any characters up to white space, a quote or one of `<>,;()`;
 * - a relative path: segments of word characters, `.` and `-`, separated by single slashes, whose
 *   last segment ends with a known extension (`.yaml`, `.yml`, `.md`, `.xml`, `.csv`, `.json`,
 *   `.txt`) not followed by a word character; the longest such path from the leftmost start.
 * Each character is looked at a bounded number of times.
 */
function pathTokens(text: string): string[] {
  const tokens: string[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const ch = text[i];
    if (ch === '{') {
      let j = i + 1;
      while (j < n && isNameChar(text[j])) j++;
      if (j > i + 1 && text[j] === '}') {
        let k = j + 1;
        while (k < n && !isTokenEnd(text[k])) k++;
        tokens.push(text.slice(i, k));
        i = k;
      } else {
        i += 1;
      }
      continue;
    }
    if (!isSegmentChar(ch)) {
      i += 1;
      continue;
    }
    // The run a path starting here could cover: segments joined by single slashes.
    let end = i;
    for (;;) {
      while (end < n && isSegmentChar(text[end])) end++;
      if (text[end] === '/' && isSegmentChar(text[end + 1])) end++;
      else break;
    }
    // The longest path ends at the last extension of the run; a later start in the same run could
    // only end at fewer places, so when there is none, the whole run holds no path.
    const stop = lastExtensionEnd(text, i, end);
    if (stop === -1) {
      i = end;
    } else {
      tokens.push(text.slice(i, stop));
      i = stop;
    }
  }
  return tokens;
}

/** End of the last `.<extension>` in `text[from, to)` that follows a non-slash and ends a word, or -1. */
function lastExtensionEnd(text: string, from: number, to: number): number {
  for (let dot = to - 1; dot > from; dot--) {
    if (text[dot] !== '.' || text[dot - 1] === '/') continue;
    for (const ext of EXTENSIONS) {
      const stop = dot + 1 + ext.length;
      if (stop <= to && text.startsWith(ext, dot + 1) && !isWordChar(text[stop])) return stop;
    }
  }
  return -1;
}

function isNameChar(ch: string): boolean {
  return isWordChar(ch) || ch === '-';
}

function isSegmentChar(ch: string | undefined): boolean {
  return ch !== undefined && (isWordChar(ch) || ch === '.' || ch === '-');
}

function isTokenEnd(ch: string): boolean {
  return TOKEN_END.includes(ch) || WHITESPACE.test(ch);
}

/** `text` without its trailing characters from `chars`. */
function trimEndChars(text: string, chars: string): string {
  let end = text.length;
  while (end > 0 && chars.includes(text[end - 1])) end--;
  return text.slice(0, end);
}

/** Whether the last `.` of `text` is followed by one or more ASCII letters or digits only. */
function hasExtension(text: string): boolean {
  const dot = text.lastIndexOf('.');
  if (dot === -1 || dot === text.length - 1) return false;
  for (let i = dot + 1; i < text.length; i++) {
    const ch = text[i];
    if (!(isAsciiLetter(ch) || (ch >= '0' && ch <= '9'))) return false;
  }
  return true;
}

/** Runs the agent's critical actions in order (see the module comment). */
export async function processCriticalActions(
  agent: AgentDefinition,
  ctx: CriticalActionContext,
): Promise<CriticalActionResult> {
  const roots = [ctx.bundle.bundleRoot, ctx.bundle.coreRoot, ctx.bundle.projectRoot];
  const messages: SystemMessage[] = [];
  const loadedFiles: string[] = [];
  let variables = { ...ctx.variables };
  let configPath: string | undefined;
  const resolveOptions = ctx.date !== undefined ? { date: ctx.date } : {};

  for (const instruction of agent.criticalActions) {
    const targets = fileLoadTargets(instruction);
    if (targets.length === 0) {
      let text: string;
      try {
        text = resolveVariables(instruction, variables, resolveOptions);
      } catch (error) {
        // A variable cycle or an expansion over its limit: the instruction cannot be given.
        if (error instanceof BundleError) throw new CriticalActionError(instruction, error, { file: ctx.agentFile });
        throw error;
      }
      messages.push({ role: 'system', content: `[Critical Instruction] ${text}` });
      continue;
    }
    for (const target of targets) {
      let realPath: string;
      let content: string;
      try {
        const resolved = resolveVariables(target, variables, { ...resolveOptions, strict: true });
        realPath = await guardRead(resolved, roots);
        if (loadedFiles.includes(realPath)) continue;
        content = await readLimited(realPath, ctx.maxReadBytes);
      } catch (error) {
        throw new CriticalActionError(instruction, error, { file: ctx.agentFile });
      }
      loadedFiles.push(realPath);
      messages.push({ role: 'system', content: `[Critical Action] Loaded file: ${realPath}\n\n${content}` });

      if (isConfig(realPath, instruction)) {
        const config = parseConfig(content, instruction, ctx.agentFile, realPath);
        let own: Record<string, string>;
        try {
          own = resolveConfigVariables(config, variables, resolveOptions);
        } catch (error) {
          // A cycle (`output_folder: '{output_folder}/docs'`) or a limit: the config is at fault.
          if (error instanceof BundleError) throw new CriticalActionError(instruction, inFile(error, realPath), { file: ctx.agentFile });
          throw error;
        }
        variables = { ...variables, ...own };
        if (configPath === undefined) {
          configPath = realPath;
          variables.config_source = realPath;
        }
      }
    }
  }
  return { messages, variables, ...(configPath !== undefined ? { configPath } : {}), loadedFiles };
}

function isConfig(file: string, instruction: string): boolean {
  const base = path.basename(file).toLowerCase();
  if (base === 'config.yaml' || base === 'config.yml') return true;
  return /\.ya?ml$/.test(base) && SET_VARIABLES.test(instruction);
}

function parseConfig(content: string, instruction: string, agentFile: string, configFile: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = parseYamlSafe(content, configFile);
  } catch (error) {
    throw new CriticalActionError(instruction, error, { file: agentFile });
  }
  if (parsed === null || parsed === undefined) return {};
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new CriticalActionError(instruction, new Error(`config file ${configFile} is not a mapping of keys to values`), {
      file: agentFile,
    });
  }
  return parsed as Record<string, unknown>;
}

async function readLimited(file: string, maxBytes: number | undefined): Promise<string> {
  if (maxBytes !== undefined) {
    const { size } = await fs.stat(file);
    if (size > maxBytes) throw new Error(`File is too large: ${size} bytes (limit ${maxBytes})`);
  }
  return fs.readFile(file, 'utf8');
}
