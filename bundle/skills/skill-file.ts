/**
 * Reading one Agent Skills `SKILL.md` for discovery, leniently (agentskills.io client guide, step
 * 2): skills written for other clients often bend the specification (a name that differs from the
 * folder, an unquoted colon in a description), and refusing them would hide skills that work
 * everywhere else. Only what makes a skill unusable drops it: no description (the model could never
 * choose it) or front matter that does not parse even after the guide's colon repair. Everything
 * else becomes a warning diagnostic. The strict reading is `validate-skill.ts`.
 *
 * Pure code (no file-system access): discovery reads the file, this decides what it says.
 */
import * as path from 'node:path';
import { BundleError, LimitExceededError } from '../errors';
import { parseYamlSafe } from '../safe-yaml';

/** Largest SKILL.md read: 256 KiB (the largest BMAD one, bmad-retrospective in v6.8.0, is 64 KB). */
export const MAX_SKILL_FILE_BYTES = 256 * 1024;

/** Longest `name` the specification allows. */
export const MAX_SKILL_NAME_CHARS = 64;
/** Longest `description` the specification allows. */
export const MAX_SKILL_DESCRIPTION_CHARS = 1024;
/** Longest `compatibility` the specification allows. */
export const MAX_SKILL_COMPATIBILITY_CHARS = 500;

/** The specification's name rule: lowercase letters and digits in hyphen-separated runs (so no leading, trailing or doubled hyphen). */
export const SKILL_NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/**
 * A problem found in a skill. In discovery, `error` means the skill's file is unusable (unreadable,
 * no description, front matter that cannot be read) and the skill was skipped; `warning` is
 * anything else, including skills set aside on purpose (shadowed, a symlink leading out). In
 * validation, `error` breaks the specification and `warning` is advice.
 */
export interface SkillDiagnostic {
  level: 'warning' | 'error';
  /** The file concerned, absolute (usually the SKILL.md). */
  file: string;
  /** The front-matter field (`name`, `metadata.version`) or `body`, when the problem is in one. */
  field?: string;
  /** 1-based line in `file`, when known. */
  line?: number;
  message: string;
}

/** What discovery keeps of one skill: its catalog entry, where it lives, and its optional fields. */
export interface SkillRecord {
  name: string;
  description: string;
  /** Absolute path of the SKILL.md. */
  file: string;
  /** The skill's folder (the parent of `file`): relative paths in the skill resolve from here. */
  dir: string;
  license?: string;
  compatibility?: string;
  /** String values only; other values are dropped with a warning. */
  metadata?: Record<string, string>;
  /** `allowed-tools`, split on white space. */
  allowedTools?: string[];
  /** `disable-model-invocation: true`: the skill is left out of the model's catalog (a user may still run it). */
  disableModelInvocation: boolean;
  /**
   * Offset in the file's text (as read, byte-order mark removed) where the body starts: the
   * activation reads the file again and takes `skillBody(text)`, so a skill edited between
   * discovery and activation is seen as it is now, and bodies do not sit in memory meanwhile.
   */
  bodyOffset: number;
}

/** The outcome of `parseSkillFile`: the record when the skill is usable, and every problem found. */
export interface ParsedSkillFile {
  skill?: SkillRecord;
  diagnostics: SkillDiagnostic[];
}

/** Where the front matter is in a SKILL.md text. */
export interface FrontMatterSplit {
  /** The YAML between the delimiter lines. */
  yaml: string;
  /** Line of the text (1-based) the YAML starts on, for diagnostics. */
  yamlLine: number;
  /** Offset of the first character after the closing delimiter line. */
  bodyOffset: number;
}

// The opening line must be the file's first (after an optional byte-order mark); the closing one
// is the next line that is `---` alone. Trailing blanks are tolerated: editors leave them.
const OPENING = /^\uFEFF?---[ \t]*\r?\n/;
const CLOSING = /^---[ \t]*(?:\r?\n|$)/m;

/** Splits `text` into front matter and body; `undefined` when it does not open with a `---` line or never closes it. */
export function splitFrontMatter(text: string): FrontMatterSplit | undefined {
  const open = OPENING.exec(text);
  if (!open) return undefined;
  const start = open[0].length;
  const rest = text.slice(start);
  const close = CLOSING.exec(rest);
  if (!close) return undefined;
  const yamlEnd = start + close.index;
  return { yaml: text.slice(start, yamlEnd), yamlLine: 2, bodyOffset: yamlEnd + close[0].length };
}

/** The skill's instructions: everything after the front matter, trimmed (the whole text, trimmed, when there is none). */
export function skillBody(text: string): string {
  const split = splitFrontMatter(text);
  return (split ? text.slice(split.bodyOffset) : text.replace(/^\uFEFF/, '')).trim();
}

/** The outcome of reading front matter as YAML: the mapping, or why not; `repaired` when the colon fallback was needed. */
export type FrontMatterData = { ok: true; data: Record<string, unknown>; repaired: boolean } | { ok: false; message: string; line?: number };

/**
 * Parses front-matter YAML with the project's bounded parser. With `lenient`, YAML that does not
 * parse gets one retry after `repairColonValues` (the guide's fallback for unquoted values that
 * contain `: `). A limit exceeded is never retried: the repair would not make the text smaller.
 */
export function parseFrontMatter(yaml: string, file: string, lenient: boolean): FrontMatterData {
  const first = tryParse(yaml, file);
  if (first.ok) return asMapping(first.value, false);
  if (!lenient || first.limit) return first;
  const repaired = repairColonValues(yaml);
  if (repaired === yaml) return first;
  const second = tryParse(repaired, file);
  // The first error is reported: it points at the text the author wrote, not at the repair.
  return second.ok ? asMapping(second.value, true) : first;
}

function tryParse(yaml: string, file: string): { ok: true; value: unknown } | { ok: false; message: string; line?: number; limit: boolean } {
  try {
    return { ok: true, value: parseYamlSafe(yaml, file) };
  } catch (error) {
    if (error instanceof BundleError) {
      const line = (error as { line?: number }).line;
      const detail = 'detail' in error && typeof error.detail === 'string' ? error.detail : error.message.split('\n')[0]!;
      return { ok: false, message: detail, ...(line !== undefined ? { line } : {}), limit: error instanceof LimitExceededError };
    }
    throw error;
  }
}

function asMapping(value: unknown, repaired: boolean): FrontMatterData {
  if (isPlainObject(value)) return { ok: true, data: value, repaired };
  return { ok: false, message: value === null || value === undefined ? 'the front matter is empty' : 'the front matter is not a mapping of fields' };
}

/** Whether `value` is a YAML mapping as plain data (not an array, not null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// `key: value` where the value is a plain scalar: not quoted, not a block scalar, flow collection,
// anchor, alias, tag or comment. Keys are simple words, as front-matter keys are.
const PLAIN_ENTRY = /^([ \t]*)([A-Za-z0-9_][A-Za-z0-9_.-]*)[ \t]*:[ \t]+([^\s"'|>[{&*!#].*)$/;

/**
 * The guide's fallback for YAML other clients accept: a plain value that contains `: ` (invalid
 * YAML) becomes a double-quoted scalar, joined with its continuation lines (those indented deeper
 * than its key) as YAML would fold them. JSON's string form is a valid double-quoted YAML scalar.
 * Other lines are left alone.
 */
export function repairColonValues(yaml: string): string {
  const lines = yaml.split(/\r?\n/);
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const entry = PLAIN_ENTRY.exec(line);
    if (!entry || !/:(\s|$)/.test(entry[3]!)) {
      out.push(line);
      continue;
    }
    const indent = entry[1]!;
    const parts = [entry[3]!.trim()];
    // Continuation lines: deeper than the key, or blank lines between such lines.
    let j = i + 1;
    while (j < lines.length) {
      const next = lines[j]!;
      if (next.trim() === '') {
        const after = lines.slice(j + 1).find((l) => l.trim() !== '');
        if (after === undefined || leadingSpaces(after) <= indent.length) break;
        parts.push('');
      } else if (leadingSpaces(next) > indent.length) {
        parts.push(next.trim());
      } else {
        break;
      }
      j++;
    }
    out.push(`${indent}${entry[2]}: ${JSON.stringify(foldPlain(parts))}`);
    i = j - 1;
  }
  return out.join('\n');
}

function leadingSpaces(line: string): number {
  return line.length - line.trimStart().length;
}

/** Folds the lines of a plain scalar as YAML does: single breaks become spaces, each blank line a newline. */
function foldPlain(parts: string[]): string {
  let text = '';
  let pendingBreaks = 0;
  for (const part of parts) {
    if (part === '') {
      pendingBreaks++;
      continue;
    }
    if (text !== '') text += pendingBreaks > 0 ? '\n'.repeat(pendingBreaks) : ' ';
    text += part;
    pendingBreaks = 0;
  }
  // A trailing ` #...` is a comment in plain YAML; the repair keeps it out of the value too.
  return text.replace(/\s+#.*$/, '');
}

/** A scalar value as text (numbers and booleans as YAML wrote them), or `undefined` for a collection or null. */
function scalarText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return undefined;
}

/** Length in characters (code points), as the specification counts. */
export function charLength(text: string): number {
  return Array.from(text).length;
}

/**
 * Reads the SKILL.md `text` of `file` (absolute) leniently, as the client guide says: the skill is
 * returned unless its description is missing or empty or its front matter unusable (an error
 * diagnostic then says why); deviations that do not stop the skill from working are warnings.
 */
export function parseSkillFile(text: string, file: string): ParsedSkillFile {
  const diagnostics: SkillDiagnostic[] = [];
  const warn = (message: string, field?: string) => diagnostics.push({ level: 'warning', file, ...(field ? { field } : {}), message });
  const fail = (message: string, field?: string, line?: number): ParsedSkillFile => {
    diagnostics.push({ level: 'error', file, ...(field ? { field } : {}), ...(line !== undefined ? { line } : {}), message });
    return { diagnostics };
  };

  const split = splitFrontMatter(text);
  if (!split) return fail('skipped: SKILL.md must open with YAML front matter between two `---` lines');
  const parsed = parseFrontMatter(split.yaml, file, true);
  if (!parsed.ok) {
    const line = parsed.line === undefined ? undefined : parsed.line + split.yamlLine - 1;
    return fail(`skipped: the front matter cannot be read: ${parsed.message}`, undefined, line);
  }
  if (parsed.repaired) warn('the front matter is not valid YAML (an unquoted value contains ": "); it was read with those values quoted');
  const data = parsed.data;

  const rawDescription = data.description;
  const description = scalarText(rawDescription)?.trim();
  if (description === undefined || description === '') {
    return fail(
      rawDescription === undefined || rawDescription === null ? 'skipped: no description (the model chooses skills by their description)' : 'skipped: the description is empty or not text',
      'description',
    );
  }
  if (charLength(description) > MAX_SKILL_DESCRIPTION_CHARS) warn(`the description is longer than ${MAX_SKILL_DESCRIPTION_CHARS} characters`, 'description');

  const dir = path.dirname(file);
  const folderName = path.basename(dir);
  let name = scalarText(data.name)?.trim();
  if (name === undefined || name === '') {
    const what = data.name === undefined || data.name === null ? 'no name' : 'the name is empty or not text';
    warn(`${what}; the folder name "${folderName}" is used`, 'name');
    name = folderName;
  } else {
    if (name !== folderName) warn(`the name "${name}" differs from its folder "${folderName}"`, 'name');
    if (charLength(name) > MAX_SKILL_NAME_CHARS) warn(`the name is longer than ${MAX_SKILL_NAME_CHARS} characters`, 'name');
    if (!SKILL_NAME_PATTERN.test(name)) warn('the name should hold only lowercase letters, digits and single hyphens between them', 'name');
  }

  const skill: SkillRecord = { name, description, file, dir, disableModelInvocation: false, bodyOffset: split.bodyOffset };

  const textField = (key: 'license' | 'compatibility'): string | undefined => {
    const value = data[key];
    if (value === undefined || value === null) return undefined;
    const text = scalarText(value);
    if (text === undefined) warn(`${key} is not text; ignored`, key);
    return text;
  };
  const license = textField('license');
  if (license !== undefined) skill.license = license;
  const compatibility = textField('compatibility');
  if (compatibility !== undefined) {
    skill.compatibility = compatibility;
    if (charLength(compatibility) > MAX_SKILL_COMPATIBILITY_CHARS) warn(`compatibility is longer than ${MAX_SKILL_COMPATIBILITY_CHARS} characters`, 'compatibility');
  }

  if (data.metadata !== undefined && data.metadata !== null) {
    if (!isPlainObject(data.metadata)) {
      warn('metadata is not a mapping; ignored', 'metadata');
    } else {
      const metadata: Record<string, string> = {};
      for (const [key, value] of Object.entries(data.metadata)) {
        const text = scalarText(value);
        if (text === undefined) warn(`metadata.${key} is not text; ignored`, `metadata.${key}`);
        else metadata[key] = text;
      }
      skill.metadata = metadata;
    }
  }

  const tools = data['allowed-tools'];
  if (typeof tools === 'string') {
    skill.allowedTools = tools.split(/\s+/).filter(Boolean);
  } else if (Array.isArray(tools) && tools.every((t) => typeof t === 'string')) {
    // Some clients write a YAML list; the meaning is plain.
    skill.allowedTools = tools.map((t) => t.trim()).filter(Boolean);
    warn('allowed-tools should be one space-separated string; the list was read', 'allowed-tools');
  } else if (tools !== undefined && tools !== null) {
    warn('allowed-tools is not a space-separated string; ignored', 'allowed-tools');
  }

  const disable = data['disable-model-invocation'];
  if (disable === true) skill.disableModelInvocation = true;
  else if (disable !== undefined && disable !== null && disable !== false) {
    warn('disable-model-invocation is not true or false; the skill stays visible to the model', 'disable-model-invocation');
  }

  return { skill, diagnostics };
}
