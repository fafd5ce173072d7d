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
 * reader (`bmad-config.ts`) uses the same layer reader and merge. Layers are read and parsed by
 * toml-layer.ts.
 */
import * as path from 'node:path';
import { BundleError, inFile, LimitExceededError } from '../errors';
import {
  CustomizationError,
  type CustomizationTable,
  type CustomizationValue,
  isTable,
  type LayerReadOptions,
  MAX_TOML_DEPTH,
  pathExists,
  readTomlLayer,
  realOrResolved,
  setOwn,
  typeName,
} from './toml-layer';

export {
  CustomizationError,
  type CustomizationScalar,
  type CustomizationTable,
  type CustomizationValue,
  isTable,
  type LayerReadOptions,
  MAX_TOML_BYTES,
  MAX_TOML_DEPTH,
  parseTomlLayer,
  pathExists,
  readLayerText,
  readTomlLayer,
  realOrResolved,
} from './toml-layer';

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
export async function resolveCustomization(options: ResolveCustomizationOptions & { key: string }): Promise<ResolvedCustomization<CustomizationValue | undefined>>;
export async function resolveCustomization(options: ResolveCustomizationOptions): Promise<ResolvedCustomization<CustomizationValue | undefined>>;
export async function resolveCustomization(options: ResolveCustomizationOptions): Promise<ResolvedCustomization<CustomizationValue | undefined>> {
  const skillRoot = await realOrResolved(options.skillRoot);
  const projectRoot = options.projectRoot !== undefined ? await realOrResolved(options.projectRoot) : ((await findProjectRoot(skillRoot)) ?? (await findProjectRoot(process.cwd())));
  const skillName = options.skillName ?? path.basename(skillRoot);
  // The name becomes a file name in `_bmad/custom/`: it must not lead anywhere else.
  if (skillName === '' || skillName === '.' || skillName === '..' || /[/\\\0]/.test(skillName)) {
    throw new CustomizationError(`Invalid skill name ${JSON.stringify(skillName)}: it must be a plain file name`, { field: 'skillName' });
  }
  const customDir = projectRoot === undefined ? undefined : path.join(projectRoot, '_bmad', 'custom');
  const { values, files } = await mergeLayerFiles(
    [
      { file: path.join(skillRoot, 'customize.toml'), required: true },
      ...(customDir === undefined ? [] : [{ file: path.join(customDir, `${skillName}.toml`) }, { file: path.join(customDir, `${skillName}.user.toml`) }]),
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
