/**
 * A BMAD project's configuration, read natively with the result of BMAD's own
 * `_bmad/scripts/resolve_config.py`, and the flat variables a skill of one module sees.
 *
 * Since 6.4 the central config is four TOML layers of `_bmad/`, later ones winning, merged by the
 * customization rules (`mergeCustomization`): `config.toml` (installer-owned, team; required),
 * `config.user.toml` (installer-owned, personal), `custom/config.toml` (hand-written, team) and
 * `custom/config.user.toml` (hand-written, personal). Its tables are `core` (the core module's
 * answers), `modules.<module>` (each module's) and `agents.<skill>` (agent descriptors).
 *
 * Releases 6.0 to 6.3 have no `config.toml`: each module has `_bmad/<module>/config.yaml` (which
 * repeats the core values at its end), and some skills also read a `config.user.yaml` beside it.
 *
 * Values are returned as written: `{project-root}` and other variables in them are resolved by the
 * caller (`variables.ts`), which knows the session's roots.
 */
import * as path from 'node:path';
import { CORE_MODULE } from '../bundle-layout';
import { MAX_YAML_BYTES } from '../limits';
import { parseYamlSafe } from '../safe-yaml';
import { CustomizationError, isTable, mergeLayerFiles, readLayerText, selectKeys, pathExists, realOrResolved, type CustomizationTable, type LayerReadOptions } from './customize';

/** The central config's layers, relative to `_bmad/`, in merge order (the first is required). */
export const CENTRAL_CONFIG_LAYERS: readonly string[] = ['config.toml', 'config.user.toml', 'custom/config.toml', 'custom/config.user.toml'];

/** The central config and the layers it was read from. */
export interface CentralConfig {
  /** The merged table, what `resolve_config.py` prints. */
  values: CustomizationTable;
  /** The layers read, absolute, in merge order; missing optional layers are not listed. */
  files: string[];
}

/**
 * Reads the central config of the project `projectRoot` (see the module comment). Throws
 * `CustomizationError` when `_bmad/config.toml` is missing or a layer does not parse (naming the
 * file and line), and the read errors of `resolveCustomization` otherwise.
 */
export async function readCentralConfig(projectRoot: string, options: LayerReadOptions = {}): Promise<CentralConfig> {
  const bmad = path.join(await realOrResolved(projectRoot), '_bmad');
  return mergeLayerFiles(
    CENTRAL_CONFIG_LAYERS.map((layer, index) => ({ file: path.join(bmad, ...layer.split('/')), required: index === 0 })),
    options,
  );
}

/** Options of `resolveCentralConfig`. */
export interface ResolveCentralConfigOptions extends LayerReadOptions {
  /** Dotted paths to pick out, as the script's repeatable `--key` (`selectKeys`); absent or empty: everything. */
  keys?: readonly string[];
}

/**
 * What `resolve_config.py --project-root <projectRoot> [--key ...]` prints, as an object: the
 * merged central config (see `readCentralConfig` for the errors).
 */
export async function resolveCentralConfig(projectRoot: string, options: ResolveCentralConfigOptions = {}): Promise<CustomizationTable> {
  const { values } = await readCentralConfig(projectRoot, options);
  return selectKeys(values, options.keys ?? []);
}

/** The variables of a module and where they came from. */
export interface ModuleVariables {
  /** Flat variables, values as written (unresolved). */
  variables: Record<string, string>;
  /** The files read, absolute, in the order their values were applied. */
  files: string[];
  /** `central`: the 6.4+ `config.toml` layers; `module-yaml`: the 6.0-6.3 `config.yaml` files. */
  source: 'central' | 'module-yaml';
}

/**
 * The flat variables a skill of `module` sees, values as written: the core module's values, then
 * the module's own over them.
 *
 * - With `_bmad/config.toml` (6.4+): the central config's `core` table, then `modules.<module>`.
 * - Without (6.0-6.3): `_bmad/core/config.yaml`, `_bmad/<module>/config.yaml`, then the personal
 *   `config.user.yaml` beside each (core's, then the module's), missing files skipped.
 *
 * Only scalars become variables: strings as they are, numbers and booleans as `String()` gives
 * them, dates in their TOML form; tables, arrays and YAML nulls are left out (a variable is a
 * string). Throws `CustomizationError` for a module name that is not one folder name or a file
 * that does not parse as a mapping, and the errors of `readCentralConfig` / `parseYamlSafe`.
 */
export async function readModuleVariables(projectRoot: string, module: string, options: LayerReadOptions = {}): Promise<ModuleVariables> {
  if (!/^[A-Za-z0-9_][A-Za-z0-9._-]*$/.test(module)) {
    throw new CustomizationError(`Invalid module name ${JSON.stringify(module)}: it must be a folder name of _bmad/`, { field: 'module' });
  }
  const root = await realOrResolved(projectRoot);
  const bmad = path.join(root, '_bmad');
  if (await pathExists(path.join(bmad, 'config.toml'))) {
    const { values, files } = await readCentralConfig(root, options);
    const modules = values.modules;
    const own = isTable(modules) && Object.hasOwn(modules, module) ? modules[module] : undefined;
    const variables = flatVariables(values.core, own);
    return { variables, files, source: 'central' };
  }
  const modules = module === CORE_MODULE ? [CORE_MODULE] : [CORE_MODULE, module];
  const candidates = [...modules.map((m) => path.join(bmad, m, 'config.yaml')), ...modules.map((m) => path.join(bmad, m, 'config.user.yaml'))];
  const tables: unknown[] = [];
  const files: string[] = [];
  for (const file of candidates) {
    const read = await readLayerText(file, MAX_YAML_BYTES, 'MAX_YAML_BYTES', options);
    if (read === undefined) continue;
    const parsed = parseYamlSafe(read.text, file);
    if (parsed !== null && parsed !== undefined && !isTable(parsed)) {
      throw new CustomizationError(`Config file ${file} is not a mapping of keys to values`, { file });
    }
    tables.push(parsed);
    files.push(file);
  }
  return { variables: flatVariables(...tables), files, source: 'module-yaml' };
}

/** `readModuleVariables(...).variables`: the flat variables of `module`, values as written. */
export async function moduleVariables(projectRoot: string, module: string, options: LayerReadOptions = {}): Promise<Record<string, string>> {
  return (await readModuleVariables(projectRoot, module, options)).variables;
}

/** The scalar entries of each table in turn, later ones winning; non-tables are skipped. */
function flatVariables(...tables: unknown[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const table of tables) {
    if (!isTable(table)) continue;
    for (const [key, value] of Object.entries(table as Record<string, unknown>)) {
      const text = scalarText(value);
      if (text !== undefined) Object.defineProperty(out, key, { value: text, enumerable: true, writable: true, configurable: true });
    }
  }
  return out;
}

function scalarText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  // A TomlDate's toISOString keeps its TOML form (a local date stays `1979-05-27`).
  if (value instanceof Date) return value.toISOString();
  return undefined;
}
