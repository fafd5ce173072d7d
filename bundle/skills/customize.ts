/**
 * A BMAD skill's customization (`customize.toml`), resolved natively instead of by running BMAD's
 * `_bmad/scripts/resolve_customization.py`, with the same result. Three layers, later ones winning:
 *
 * 1. `{skill-root}/customize.toml` (the skill's defaults; required),
 * 2. `{project-root}/_bmad/custom/{skill-name}.toml` (team overrides; optional),
 * 3. `{project-root}/_bmad/custom/{skill-name}.user.toml` (personal overrides; optional).
 *
 * The merge is purely structural (`mergeCustomization`), as in the script: scalars override, tables
 * merge deeply, arrays whose items are all tables sharing a `code` (else an `id`) merge by that key
 * (a matching item is replaced whole, a new one appended), every other array appends. The rules
 * follow BMAD 6.11's `config_utils.py`, which differs from 6.8's copy inside the script in two
 * ways, both errors here: an override layer that does not parse (6.8 warned and skipped it), and a
 * keyed identifier that is not a non-empty string (6.8 used it as a key). The central config
 * reader (`bmad-config.ts`) uses the same layer reader and merge.
 *
 * Where the Python reader (`tomllib`, TOML 1.0) and smol-toml (TOML 1.1) disagree, the file is
 * refused as Python refuses it: smol-toml accepts line breaks and trailing commas in inline tables,
 * `\e` and `\x` escapes and times without seconds, which BMAD's own script would reject, so a
 * customization that works here would break BMAD. A byte-order mark is refused for the same reason.
 *
 * Files are read as the runtime reads every bundle file: regular files only (`readTextFile`), hard
 * links only when allowed, and at most `MAX_TOML_BYTES`; nesting is bounded by `MAX_TOML_DEPTH`
 * since parsing and merging run on the worker's event loop.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parse as parseToml, TomlDate, TomlError } from 'smol-toml';
import { BundleError, inFile, LimitExceededError } from '../errors';
import { errorCode, FileTooLargeError } from '../file-errors';
import { readTextFile } from '../text-content';

/**
 * Largest TOML layer read: 256 KiB. The largest real `customize.toml` (BMAD 6.11's party mode) is
 * 12 KB; smol-toml parses a quarter megabyte of tables in well under 0.1 s.
 */
export const MAX_TOML_BYTES = 256 * 1024;

/**
 * Deepest nesting of tables and arrays in one layer (real files nest 3 deep). Dotted keys can nest
 * a table once per dot, and merging recurses once per level, so the depth is bounded here.
 */
export const MAX_TOML_DEPTH = 64;

/** A TOML scalar: string, number (integer or float), boolean, or date/time (a `TomlDate`). */
export type CustomizationScalar = string | number | boolean | Date;

/** Any TOML value. */
export type CustomizationValue = CustomizationScalar | CustomizationValue[] | CustomizationTable;

/** A TOML table: what a layer parses to and what the merge returns. */
export interface CustomizationTable {
  [key: string]: CustomizationValue;
}

/**
 * A customization or central-config layer cannot be used: it does not parse (`line` and `column`
 * then say where, when TOML reports it), the required `customize.toml`/`config.toml` is missing,
 * or a keyed array has an identifier that is not a non-empty string (`field` names the array).
 */
export class CustomizationError extends BundleError {
  /** 1-based line of the problem, when known. */
  line?: number;
  /** 1-based column of the problem, when known. */
  column?: number;

  constructor(message: string, details: { file?: string; field?: string; line?: number; column?: number; cause?: unknown } = {}) {
    super(message, { file: details.file, field: details.field, cause: details.cause });
    if (details.line !== undefined) this.line = details.line;
    if (details.column !== undefined) this.column = details.column;
  }
}

/** How layers are read. */
export interface LayerReadOptions {
  /** Read layers with more than one hard link (default: refused, as for every file the runtime reads). */
  allowHardLinks?: boolean;
}

/** What `resolveCustomization` needs. */
export interface ResolveCustomizationOptions extends LayerReadOptions {
  /** The skill's folder (holding `customize.toml`). */
  skillRoot: string;
  /**
   * The project holding `_bmad/custom/`. When absent it is found as the script finds it: the
   * nearest folder, from the skill's real folder upwards, holding `_bmad` or `.git`, else the
   * same from the current directory; when neither exists only the defaults apply.
   */
  projectRoot?: string;
  /** Name of the override files (default: the base name of the skill's real folder, as the script). */
  skillName?: string;
  /**
   * A dotted path to pick out (`agent`, `agent.menu`), walked as the script's `--key`: split on
   * every `.`, only tables are walked (never array items). `values` is then the value found, or
   * undefined where the script would leave the key out of its output. Absent: the whole table.
   * (The script's output for several keys at once is `selectKeys`.)
   */
  key?: string;
}

/** A resolved customization; `V` is the merged table, or with `key` the value picked out. */
export interface ResolvedCustomization<V = CustomizationTable> {
  /** The merged table (what the script prints as JSON), or the value at `key`. */
  values: V;
  /** The layers read, absolute, in merge order; a missing optional layer is not listed. */
  files: string[];
  /** The project root used, absolute (undefined when none was given or found). */
  projectRoot?: string;
}

/**
 * Resolves a skill's customization: `customize.toml`, then the team and user overrides of
 * `{projectRoot}/_bmad/custom/`, merged by `mergeCustomization`. Missing override files are
 * skipped. Throws `CustomizationError` when `customize.toml` is missing, a layer does not parse
 * (naming the file and, from TOML, the line), a keyed array has a bad identifier or `skillName`
 * is not a plain file name;
 * `LimitExceededError` over `MAX_TOML_BYTES` or `MAX_TOML_DEPTH`; the read's own typed errors
 * for a layer that is not a regular file (`NotAFileError`), is hard-linked or binary.
 */
export async function resolveCustomization(options: ResolveCustomizationOptions & { key?: undefined }): Promise<ResolvedCustomization>;
export async function resolveCustomization(
  options: ResolveCustomizationOptions & { key: string },
): Promise<ResolvedCustomization<CustomizationValue | undefined>>;
export async function resolveCustomization(options: ResolveCustomizationOptions): Promise<ResolvedCustomization<CustomizationValue | undefined>>;
export async function resolveCustomization(options: ResolveCustomizationOptions): Promise<ResolvedCustomization<CustomizationValue | undefined>> {
  const skillRoot = await realOrResolved(options.skillRoot);
  const projectRoot =
    options.projectRoot !== undefined
      ? await realOrResolved(options.projectRoot)
      : ((await findProjectRoot(skillRoot)) ?? (await findProjectRoot(process.cwd())));
  const skillName = options.skillName ?? path.basename(skillRoot);
  // The name becomes a file name in `_bmad/custom/`: it must not lead anywhere else.
  if (skillName === '' || skillName === '.' || skillName === '..' || /[/\\\0]/.test(skillName)) {
    throw new CustomizationError(`Invalid skill name ${JSON.stringify(skillName)}: it must be a plain file name`, { field: 'skillName' });
  }
  const customDir = projectRoot === undefined ? undefined : path.join(projectRoot, '_bmad', 'custom');
  const { values, files } = await mergeLayerFiles(
    [
      { file: path.join(skillRoot, 'customize.toml'), required: true },
      ...(customDir === undefined
        ? []
        : [{ file: path.join(customDir, `${skillName}.toml`) }, { file: path.join(customDir, `${skillName}.user.toml`) }]),
    ],
    options,
  );
  return {
    values: options.key === undefined ? values : extractKey(values, options.key),
    files,
    ...(projectRoot !== undefined ? { projectRoot } : {}),
  };
}

/**
 * The project root the script uses when none is given (`find_project_root`): `start` (real path)
 * or its nearest ancestor holding an entry named `_bmad` or `.git` (followed through symlinks, so
 * a dangling link does not count). Undefined when no folder up to the file-system root has one.
 */
export async function findProjectRoot(start: string): Promise<string | undefined> {
  let current = await realOrResolved(start);
  for (;;) {
    if ((await pathExists(path.join(current, '_bmad'))) || (await pathExists(path.join(current, '.git')))) return current;
    const parent = path.dirname(current);
    if (parent === current) return undefined;
    current = parent;
  }
}

/** One layer of a merge: its file, and whether its absence is an error. */
export interface LayerFile {
  file: string;
  required?: boolean;
}

/**
 * Reads `layers` in order (skipping missing optional ones) and merges them with
 * `mergeCustomization`; a merge error is given the file of the layer being merged in. Shared by
 * the customization and central-config readers, which differ only in their list of layers.
 */
export async function mergeLayerFiles(layers: readonly LayerFile[], options: LayerReadOptions = {}): Promise<{ values: CustomizationTable; files: string[] }> {
  let values: CustomizationTable = {};
  const files: string[] = [];
  for (const layer of layers) {
    const parsed = await readTomlLayer(layer.file, { ...options, required: layer.required === true });
    if (parsed === undefined) continue;
    files.push(layer.file);
    try {
      values = mergeCustomization(values, parsed);
    } catch (error) {
      throw error instanceof BundleError ? inFile(error, layer.file) : error;
    }
  }
  return { values, files };
}

/**
 * Reads and parses one TOML layer: undefined when the file does not exist (followed through
 * symlinks, as Python's `Path.exists`) and is not `required`. See `resolveCustomization` for the
 * errors.
 */
export async function readTomlLayer(file: string, options: LayerReadOptions & { required?: boolean } = {}): Promise<CustomizationTable | undefined> {
  const read = await readLayerText(file, MAX_TOML_BYTES, 'MAX_TOML_BYTES', options);
  if (read === undefined) {
    if (options.required) throw new CustomizationError(`Required TOML file not found: ${file}`, { file });
    return undefined;
  }
  if (read.hadByteOrderMark) {
    // tomllib refuses it ("Invalid statement"), so BMAD's scripts fail on such a file.
    throw new CustomizationError(`Invalid TOML in ${file}: a byte-order mark is not allowed (BMAD's Python reader refuses it) at line 1, column 1`, {
      file,
      line: 1,
      column: 1,
    });
  }
  return parseTomlLayer(read.text, file);
}

/**
 * Parses the TOML `text` of `file` (see the module comment for the TOML 1.0 rule) into plain
 * objects. Throws `CustomizationError` (with line and column) or `LimitExceededError`.
 */
export function parseTomlLayer(text: string, file: string): CustomizationTable {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_TOML_BYTES) {
    throw new LimitExceededError(`TOML file ${file} is too large to parse: ${bytes} bytes`, 'MAX_TOML_BYTES', MAX_TOML_BYTES, { file });
  }
  let parsed: Record<string, unknown>;
  try {
    parsed = parseToml(text, { maxDepth: MAX_TOML_DEPTH });
  } catch (error) {
    if (error instanceof TomlError) {
      const problem = error.message.split('\n')[0].replace(/^Invalid TOML document: /, '');
      throw new CustomizationError(`Invalid TOML in ${file}: ${problem} at line ${error.line}, column ${error.column}`, {
        file,
        line: error.line,
        column: error.column,
        cause: error,
      });
    }
    throw error;
  }
  const newer = findToml11Syntax(text);
  if (newer !== undefined) {
    const { line, column } = lineAndColumn(text, newer.offset);
    throw new CustomizationError(
      `Invalid TOML in ${file}: ${newer.what} is TOML 1.1, which BMAD's Python reader (TOML 1.0) refuses, at line ${line}, column ${column}`,
      { file, line, column },
    );
  }
  return toPlainTable(parsed, file, 1);
}

/**
 * Merges `override` over `base` by BMAD's structural rules (6.11 `config_utils.structural_merge`):
 *
 * - a key only in one side is kept as it is;
 * - two tables merge key by key, recursively;
 * - two arrays: when every item of both is a table and every item has a `code` (checked first) or
 *   else every item has an `id`, items merge by that identifier: an override item with a known
 *   identifier replaces the base item whole (its other fields are not merged), a new one is
 *   appended, in order; the identifier must be a non-empty string (else `CustomizationError`,
 *   whose `field` is the array's dotted path). Any other pair of arrays (plain values, tables
 *   without identifiers, items mixing `code` and `id`) is concatenated, base first;
 * - anything else, including a key whose type changes (table to string, array to table...),
 *   takes the override's value.
 *
 * Pure: neither input is modified; the result may share nested values with them (keyed items are
 * copied one level, as the script's `dict(item)`).
 */
export function mergeCustomization(base: CustomizationTable, override: CustomizationTable): CustomizationTable {
  return mergeTables(base, override, [], 1);
}

function mergeValues(base: CustomizationValue, override: CustomizationValue, at: string[], depth: number): CustomizationValue {
  if (isTable(base) && isTable(override)) return mergeTables(base, override, at, depth + 1);
  if (Array.isArray(base) && Array.isArray(override)) return mergeArrays(base, override, at);
  return override;
}

function mergeTables(base: CustomizationTable, override: CustomizationTable, at: string[], depth: number): CustomizationTable {
  if (depth > MAX_TOML_DEPTH) {
    throw new LimitExceededError(`Customization tables nested too deep at ${at.join('.')}`, 'MAX_TOML_DEPTH', MAX_TOML_DEPTH, {
      field: at.join('.'),
    });
  }
  const result: CustomizationTable = {};
  for (const key of Object.keys(base)) setOwn(result, key, base[key]);
  for (const key of Object.keys(override)) {
    setOwn(result, key, Object.hasOwn(result, key) ? mergeValues(result[key], override[key], [...at, key], depth) : override[key]);
  }
  return result;
}

/** Identifier fields of keyed arrays, in the order the script tries them. */
const KEYED_MERGE_FIELDS = ['code', 'id'] as const;

function mergeArrays(base: CustomizationValue[], override: CustomizationValue[], at: string[]): CustomizationValue[] {
  // Detected on both arrays together, so one override item without the identifier turns the whole
  // array back to appending (the script's rule, which keeps a half-keyed array from guessing).
  const keyField = keyedField([...base, ...override], at);
  if (keyField === undefined) return [...base, ...override];
  const result: CustomizationTable[] = [];
  const indexByKey = new Map<string, number>();
  // A repeated identifier within the base keeps both items; the last of them is the one replaced.
  for (const item of base as CustomizationTable[]) {
    indexByKey.set(item[keyField] as string, result.length);
    result.push({ ...item });
  }
  for (const item of override as CustomizationTable[]) {
    const key = item[keyField] as string;
    const index = indexByKey.get(key);
    if (index !== undefined) {
      result[index] = { ...item };
    } else {
      indexByKey.set(key, result.length);
      result.push({ ...item });
    }
  }
  return result;
}

function keyedField(items: CustomizationValue[], at: string[]): (typeof KEYED_MERGE_FIELDS)[number] | undefined {
  if (items.length === 0 || !items.every(isTable)) return undefined;
  const tables = items as CustomizationTable[];
  for (const candidate of KEYED_MERGE_FIELDS) {
    if (!tables.every((item) => Object.hasOwn(item, candidate))) continue;
    // Checked on the first field every item has, without falling back to the next one (the script's order).
    for (const item of tables) {
      const value = item[candidate];
      if (typeof value !== 'string') {
        throw new CustomizationError(`Keyed array identifier \`${candidate}\` of ${at.join('.')} must be a string, got ${typeName(value)}`, {
          field: at.join('.'),
        });
      }
      if (value === '') {
        throw new CustomizationError(`Keyed array identifier \`${candidate}\` of ${at.join('.')} must not be empty`, { field: at.join('.') });
      }
    }
    return candidate;
  }
  return undefined;
}

/**
 * The value at the dotted path `key` as the script's `extract_key` finds it: `key` is split on every
 * `.` (so a key that itself holds a dot cannot be reached) and only tables are walked, never array
 * items. Undefined when a part is missing or the value reached so far is not a table.
 */
export function extractKey(values: CustomizationValue, key: string): CustomizationValue | undefined {
  let current: CustomizationValue = values;
  for (const part of key.split('.')) {
    if (!isTable(current) || !Object.hasOwn(current, part)) return undefined;
    current = current[part];
  }
  return current;
}

/**
 * The script's output for its repeatable `--key`: for each dotted path of `keys` whose value
 * exists (`extractKey`), an entry named by the whole path (`{ "agent.menu": [...] }`, not nested).
 * Paths not found are left out; a repeated path appears once. An empty `keys` gives `values` itself,
 * as the script prints the whole table when no `--key` is given.
 */
export function selectKeys(values: CustomizationTable, keys: readonly string[]): CustomizationTable {
  if (keys.length === 0) return values;
  const out: CustomizationTable = {};
  for (const key of keys) {
    const value = extractKey(values, key);
    if (value !== undefined) setOwn(out, key, value);
  }
  return out;
}

/** Whether `value` is a TOML table (not an array, not a date). */
export function isTable(value: unknown): value is CustomizationTable {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

/**
 * Reads a layer's text for the config readers of this folder: undefined when the file is missing
 * (ENOENT, ENOTDIR or a symlink loop, as Python's `Path.exists`); over `maxBytes` a
 * `LimitExceededError` named `limit`; another failure to resolve the path a `CustomizationError`.
 */
export async function readLayerText(
  file: string,
  maxBytes: number,
  limit: string,
  options: LayerReadOptions = {},
): Promise<{ text: string; hadByteOrderMark: boolean } | undefined> {
  let realPath: string;
  try {
    // `readTextFile` wants a symlink-free path; the scripts follow symlinks, so the real path is read.
    realPath = await fs.realpath(file);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw new CustomizationError(`Cannot read ${file}: ${(error as Error).message}`, { file, cause: error });
  }
  try {
    const { content, size } = await readTextFile(realPath, maxBytes, undefined, { allowHardLinks: options.allowHardLinks === true });
    return { text: content, hadByteOrderMark: Buffer.byteLength(content, 'utf8') !== size };
  } catch (error) {
    if (error instanceof FileTooLargeError) {
      throw new LimitExceededError(`File ${file} is too large to parse: ${error.size} bytes`, limit, maxBytes, { file });
    }
    if (isMissing(error)) return undefined;
    throw error;
  }
}

function isMissing(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP';
}

/** Whether `file` exists, through symlinks (a dangling link does not), as Python's `Path.exists`. */
export async function pathExists(file: string): Promise<boolean> {
  try {
    await fs.stat(file);
    return true;
  } catch {
    return false;
  }
}

/** `p` made absolute and real (through its symlinks) when it exists, as Python's `Path.resolve()` for the paths used here. */
export async function realOrResolved(p: string): Promise<string> {
  const absolute = path.resolve(p);
  try {
    return await fs.realpath(absolute);
  } catch {
    return absolute;
  }
}

/** Sets an own property even for `__proto__`, which plain assignment would treat as the prototype. */
function setOwn(target: CustomizationTable, key: string, value: CustomizationValue): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** smol-toml's null-prototype tables become plain objects; depth is checked on the way. */
function toPlainTable(table: Record<string, unknown>, file: string, depth: number): CustomizationTable {
  const out: CustomizationTable = {};
  for (const key of Object.keys(table)) setOwn(out, key, toPlainValue(table[key], file, depth));
  return out;
}

function toPlainValue(value: unknown, file: string, depth: number): CustomizationValue {
  if (typeof value !== 'object' || value === null || value instanceof TomlDate || value instanceof Date) return value as CustomizationScalar;
  if (depth >= MAX_TOML_DEPTH) {
    throw new LimitExceededError(`TOML nesting too deep in ${file}`, 'MAX_TOML_DEPTH', MAX_TOML_DEPTH, { file });
  }
  if (Array.isArray(value)) return value.map((item) => toPlainValue(item, file, depth + 1));
  return toPlainTable(value as Record<string, unknown>, file, depth + 1);
}

function typeName(value: CustomizationValue): string {
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Date) return 'a date';
  if (isTable(value)) return 'a table';
  return `a ${typeof value}`;
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const lineStart = before.lastIndexOf('\n') + 1;
  return { line: before.split('\n').length, column: offset - lineStart + 1 };
}

/** A bare value or key: its characters in TOML (dates and times included). */
const BARE = /[A-Za-z0-9_:.+-]/;

/** A time whose minutes are not followed by seconds (`07:32`, `1979-05-27T07:32Z`). */
const TIME_WITHOUT_SECONDS = /(?:^|[Tt])\d{2}:\d{2}(?!:)/;

/**
 * The first TOML 1.1 construct in `text`, which smol-toml has already parsed (so it is valid TOML
 * 1.1): a line break, comment or trailing comma inside an inline table (line breaks inside a
 * nested array or a multi-line string are TOML 1.0), a `\e` or `\x` escape, a time without seconds.
 * One pass over the text, skipping strings and comments.
 */
function findToml11Syntax(text: string): { what: string; offset: number } | undefined {
  const open: string[] = [];
  // The last thing seen outside strings and comments; a `,` right before `}` is a trailing comma.
  let last = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    const inInlineTable = open[open.length - 1] === '{';
    if (c === '#') {
      if (inInlineTable) return { what: 'a comment inside an inline table', offset: i };
      const end = text.indexOf('\n', i);
      i = end === -1 ? text.length : end;
    } else if (c === '\n') {
      if (inInlineTable) return { what: 'a line break inside an inline table', offset: i };
      i += 1;
    } else if (c === '"' || c === "'") {
      const scanned = scanString(text, i, c);
      if (scanned.escape !== undefined) return { what: `the escape \\${text[scanned.escape + 1]}`, offset: scanned.escape };
      last = 'value';
      i = scanned.end;
    } else if (c === '{' || c === '[') {
      open.push(c);
      last = c;
      i += 1;
    } else if (c === '}' || c === ']') {
      if (c === '}' && last === ',') return { what: 'a trailing comma in an inline table', offset: i };
      open.pop();
      last = 'value';
      i += 1;
    } else if (BARE.test(c)) {
      let end = i;
      while (end < text.length && BARE.test(text[end])) end += 1;
      const time = TIME_WITHOUT_SECONDS.exec(text.slice(i, end));
      if (time) return { what: 'a time without seconds', offset: i + time.index };
      last = 'value';
      i = end;
    } else {
      if (c !== ' ' && c !== '\t' && c !== '\r') last = c;
      i += 1;
    }
  }
  return undefined;
}

/**
 * Skips the string starting at `start` (basic or literal, one line or multi-line): where it ends,
 * and the offset of a `\e` or `\x` escape in a basic string, if any.
 */
function scanString(text: string, start: number, quote: string): { end: number; escape?: number } {
  const multi = text.startsWith(quote.repeat(3), start);
  const basic = quote === '"';
  let i = start + (multi ? 3 : 1);
  while (i < text.length) {
    const c = text[i];
    if (basic && c === '\\') {
      const next = text[i + 1];
      if (next === 'e' || next === 'x') return { end: i, escape: i };
      i += 2;
    } else if (c === quote) {
      if (!multi) return { end: i + 1 };
      let run = i;
      while (text[run] === quote) run += 1;
      // Up to two quotes before the closing three belong to the string (`""""x""""` style).
      if (run - i >= 3) return { end: run };
      i = run;
    } else {
      i += 1;
    }
  }
  return { end: text.length };
}
