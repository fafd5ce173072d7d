/**
 * Checking a skill folder against the Agent Skills specification, strictly (what `skills-ref
 * validate` checks, plus the specification's advice): where discovery bends the rules to load
 * skills written for other clients, this says what an author should fix. Errors break a "must" of
 * the specification; warnings are its advice (a body over 500 lines, a field it does not define)
 * and referenced files that do not exist, found by a heuristic reading of the body.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { errorCode } from '../file-errors';
import { readTextFile } from '../text-content';
import {
  charLength,
  isPlainObject,
  MAX_SKILL_FILE_BYTES,
  MAX_SKILL_COMPATIBILITY_CHARS,
  MAX_SKILL_DESCRIPTION_CHARS,
  MAX_SKILL_NAME_CHARS,
  parseFrontMatter,
  splitFrontMatter,
  type SkillDiagnostic,
} from './skill-file';

/** Body length the specification advises staying under, in lines. */
export const MAX_SKILL_BODY_LINES = 500;

/** Fields the specification defines, and `disable-model-invocation`, an extension Loopwright honours. */
const KNOWN_FIELDS: ReadonlySet<string> = new Set(['name', 'description', 'license', 'compatibility', 'metadata', 'allowed-tools', 'disable-model-invocation']);

/** A file the body refers to. */
export interface SkillReference {
  /** As written, without `./`, query or anchor. */
  target: string;
  /** 1-based line of the SKILL.md where it first appears. */
  line: number;
}

/**
 * Validates the skill in folder `dir` against the specification: the front matter (name 1-64
 * characters of a-z, 0-9 and single inner hyphens, equal to the folder's name; description 1-1024
 * characters; compatibility 1-500; metadata a map of strings; allowed-tools a string), the body's
 * length, and the files it references (`skillReferences`) that are missing. Every diagnostic names
 * the file, and the field (`body` for the body) when there is one. Never throws for file problems.
 */
export async function validateSkill(dir: string): Promise<SkillDiagnostic[]> {
  const folder = path.resolve(dir);
  const file = path.join(folder, 'SKILL.md');
  const diagnostics: SkillDiagnostic[] = [];
  const add = (level: SkillDiagnostic['level'], field: string | undefined, message: string, line?: number) =>
    diagnostics.push({ level, file, ...(field !== undefined ? { field } : {}), ...(line !== undefined ? { line } : {}), message });

  let text: string;
  try {
    // Hard links allowed: validation reports on the author's files and hands nothing to a model.
    ({ content: text } = await readTextFile(await fs.realpath(file), MAX_SKILL_FILE_BYTES, undefined, { allowHardLinks: true }));
  } catch (error) {
    const code = errorCode(error);
    add('error', undefined, code === 'ENOENT' ? 'the skill folder has no SKILL.md' : `SKILL.md cannot be read: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
    return diagnostics;
  }

  const split = splitFrontMatter(text);
  if (!split) {
    add('error', undefined, 'SKILL.md must open with YAML front matter between two `---` lines');
    return diagnostics;
  }
  const parsed = parseFrontMatter(split.yaml, file, false);
  if (!parsed.ok) {
    add('error', undefined, `the front matter is not valid YAML: ${parsed.message}`, parsed.line === undefined ? undefined : parsed.line + split.yamlLine - 1);
    return diagnostics;
  }
  const data = parsed.data;

  // name
  const name = data.name;
  if (name === undefined || name === null) add('error', 'name', 'name is required');
  else if (typeof name !== 'string') add('error', 'name', 'name must be a string');
  else {
    const length = charLength(name);
    if (length === 0) add('error', 'name', 'name must not be empty');
    if (length > MAX_SKILL_NAME_CHARS) add('error', 'name', `name is ${length} characters; at most ${MAX_SKILL_NAME_CHARS} are allowed`);
    if (/[^a-z0-9-]/.test(name)) add('error', 'name', 'name may only contain lowercase letters a-z, digits 0-9 and hyphens');
    if (name.startsWith('-') || name.endsWith('-')) add('error', 'name', 'name must not start or end with a hyphen');
    if (name.includes('--')) add('error', 'name', 'name must not contain consecutive hyphens');
    const folderName = path.basename(folder);
    if (name !== folderName) add('error', 'name', `name "${name}" must match the skill's folder name "${folderName}"`);
  }

  // description
  const description = data.description;
  if (description === undefined || description === null) add('error', 'description', 'description is required');
  else if (typeof description !== 'string') add('error', 'description', 'description must be a string');
  else if (description.trim() === '') add('error', 'description', 'description must not be empty');
  else if (charLength(description) > MAX_SKILL_DESCRIPTION_CHARS) {
    add('error', 'description', `description is ${charLength(description)} characters; at most ${MAX_SKILL_DESCRIPTION_CHARS} are allowed`);
  }

  // optional fields
  if (data.license !== undefined && typeof data.license !== 'string') add('error', 'license', 'license must be a string');
  const compatibility = data.compatibility;
  if (compatibility !== undefined) {
    if (typeof compatibility !== 'string') add('error', 'compatibility', 'compatibility must be a string');
    else if (compatibility.trim() === '') add('error', 'compatibility', 'compatibility must not be empty when present');
    else if (charLength(compatibility) > MAX_SKILL_COMPATIBILITY_CHARS) {
      add('error', 'compatibility', `compatibility is ${charLength(compatibility)} characters; at most ${MAX_SKILL_COMPATIBILITY_CHARS} are allowed`);
    }
  }
  if (data.metadata !== undefined) {
    if (!isPlainObject(data.metadata)) add('error', 'metadata', 'metadata must be a map from string keys to string values');
    else {
      for (const [key, value] of Object.entries(data.metadata)) {
        if (typeof value !== 'string') add('error', `metadata.${key}`, `metadata.${key} must be a string (quote it: "${String(value)}")`);
      }
    }
  }
  if (data['allowed-tools'] !== undefined && typeof data['allowed-tools'] !== 'string') {
    add('error', 'allowed-tools', 'allowed-tools must be a space-separated string');
  }
  if (data['disable-model-invocation'] !== undefined && typeof data['disable-model-invocation'] !== 'boolean') {
    add('error', 'disable-model-invocation', 'disable-model-invocation must be true or false');
  }
  for (const key of Object.keys(data)) {
    if (!KNOWN_FIELDS.has(key)) add('warning', key, `"${key}" is not a field of the Agent Skills specification; other clients ignore it`);
  }

  // body
  const body = text.slice(split.bodyOffset).trim();
  const bodyLines = body === '' ? 0 : body.split('\n').length;
  if (bodyLines > MAX_SKILL_BODY_LINES) {
    add('warning', 'body', `the body is ${bodyLines} lines; the specification advises under ${MAX_SKILL_BODY_LINES}, with details moved to referenced files`);
  }
  const firstBodyLine = lineOf(text, split.bodyOffset);
  for (const reference of skillReferences(text.slice(split.bodyOffset))) {
    const target = path.resolve(folder, reference.target);
    const line = reference.line + firstBodyLine - 1;
    try {
      await fs.stat(target);
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ENOENT' || code === 'ENOTDIR') add('warning', 'body', `references ${reference.target}, which does not exist in the skill's folder`, line);
      else add('warning', 'body', `references ${reference.target}, which cannot be checked (${code ?? String(error)})`, line);
    }
  }
  return diagnostics;
}

/** 1-based line number of `offset` in `text`. */
function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

// `[text](target)` or `[text](<target>)`, with an optional title after the target.
const MARKDOWN_LINK = /\[[^\]\n]*\]\(\s*(<[^>\n]*>|[^\s()]+)(?:\s+(?:"[^"\n]*"|'[^'\n]*'))?\s*\)/g;
// A path into one of the specification's folders, standing on its own (not the tail of a longer
// path such as `{skill-root}/scripts/x.py` or `_bmad/scripts/x.py`, nor part of a word).
const BARE_PATH = /(?<![\w./\\{}$~@%-])(?:\.\/)?((?:references|assets|scripts)\/[^\s`'"()<>[\]|,;]+)/g;
const FENCE = /^\s{0,3}(```|~~~)/;
// Words that give what follows as an example ("Bare paths (e.g. `references/guide.md`) resolve from
// the skill root"), the last one on the line before a bare path; "i.e." names a real file, so it is not one.
const EXAMPLE_MARKER = /(?<![\w.])(?:e\.\s?g\.|eg\.|for example|for instance|such as)/gi;
// What ends an example's reach after its marker: a closing parenthesis, or the end of a sentence or clause.
const EXAMPLE_END = /\)|[.!?;](?:\s|$)/;

/**
 * Files the skill body refers to, each once (its first line; `line` counts from the body's first
 * line): Markdown link targets outside fenced code (in code they are examples, not links), and
 * bare paths starting with `references/`, `assets/` or `scripts/` anywhere else, but for those the
 * text gives as examples ("e.g.", "for example", "such as" before them in the same clause). URLs, anchors,
 * absolute paths and paths with `{variables}` or wildcards are left out: they are not files of the
 * skill's folder, or not one file.
 */
export function skillReferences(body: string): SkillReference[] {
  const found = new Map<string, SkillReference>();
  const add = (raw: string, line: number) => {
    const target = cleanTarget(raw);
    if (target !== undefined && !found.has(target)) found.set(target, { target, line });
  };
  let fence: string | undefined;
  body.split('\n').forEach((text, index) => {
    const line = index + 1;
    const marker = FENCE.exec(text)?.[1];
    if (marker !== undefined && (fence === undefined || marker === fence)) {
      fence = fence === undefined ? marker : undefined;
    } else if (fence === undefined) {
      // Inline code shows Markdown literally too.
      const prose = text.replace(/`[^`]*`/g, '');
      for (const match of prose.matchAll(MARKDOWN_LINK)) add(match[1]!.replace(/^<|>$/g, ''), line);
    }
    // Link syntax is left out: its targets were taken above (or are examples, in code), and a
    // target in `<...>` may hold spaces that would cut a bare path short.
    const rest = text.replace(MARKDOWN_LINK, ' ');
    for (const match of rest.matchAll(BARE_PATH)) {
      if (!givenAsExample(rest.slice(0, match.index))) add(match[1]!.replace(/[.:!?]+$/, ''), line);
    }
  });
  return [...found.values()];
}

/**
 * Whether a bare path after `before` (its line up to the path) is given as an example: an example
 * marker comes before it with no closing parenthesis or end of sentence in between, so both paths of
 * "e.g. `references/a.md` or `references/b.md`" are examples and the path after "(e.g. x). See" is not.
 */
function givenAsExample(before: string): boolean {
  const marker = [...before.matchAll(EXAMPLE_MARKER)].at(-1);
  return marker !== undefined && !EXAMPLE_END.test(before.slice(marker.index + marker[0].length));
}

/** The file part of a reference, or `undefined` when it is not a file of the skill's folder to check. */
function cleanTarget(raw: string): string | undefined {
  let target = raw.trim();
  if (target === '' || target.startsWith('#')) return undefined;
  // A scheme (`https:`, `mailto:`) or a drive letter: not a relative file path.
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(target)) return undefined;
  if (target.startsWith('/') || target.startsWith('\\') || target.startsWith('~')) return undefined;
  if (/[{}*?$]/.test(target.replace(/[?#].*$/, ''))) return undefined;
  target = target.replace(/[?#].*$/, '');
  try {
    target = decodeURI(target);
  } catch {
    // Not percent-encoded after all; checked as written.
  }
  target = target.replace(/^(\.\/)+/, '');
  return target === '' || target === '.' ? undefined : target;
}
