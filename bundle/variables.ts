/**
 * Variable resolution for agent files, config.yaml and workflow.yaml.
 *
 * Syntax (BMAD's):
 * - `{name}`: a variable; names use letters, digits, `_` and `-` (`{project-root}`, `{user_name}`).
 * - `{config_source}:key`: the value of `key` in the config file the workflow names.
 * - `{date}`: today's date, `YYYY-MM-DD` (a system variable, never taken from `vars`, because real
 *   workflow.yaml files carry `date: system-generated` as a sibling key).
 * - `{{name}}`: a run-time or template placeholder; always left untouched.
 *
 * Values may themselves hold variables (`output_folder: '{project-root}/docs'`); they are resolved
 * recursively until nothing changes, and a loop fails with `VariableCycleError` instead of spinning.
 * Two limits keep a resolution small and fast (`LimitExceededError`): a chain of variables naming
 * variables is at most `MAX_VARIABLE_DEPTH` links long, and one resolution inserts at most
 * `MAX_VARIABLE_EXPANSION_CHARS` characters in all (so `b: '{a}{a}'`, `c: '{b}{b}'`, ... stops early).
 * These errors know no file; callers add it (`inFile`).
 */
import { ConfigVariableNotFoundError, LimitExceededError, VariableCycleError } from './errors';
import { MAX_VARIABLE_DEPTH, MAX_VARIABLE_EXPANSION_CHARS } from './limits';

/** Options of every resolver in this module. */
export interface ResolveOptions {
  /** Throw `ConfigVariableNotFoundError` on an unknown variable (default: leave it as written). */
  strict?: boolean;
  /** Value of `{date}` (default: today's local date, `YYYY-MM-DD`). */
  date?: string;
  /**
   * Values for `{config_source}:key`: the config the workflow names (values may hold variables).
   * When absent, the key is looked up in the caller's `vars` instead.
   */
  configSource?: Record<string, string>;
}

/**
 * Path variables the runtime fixes. Config and workflow keys may not override them (a config could
 * otherwise move `{project-root}` and, with it, what later paths point at).
 */
export const PROTECTED_VARIABLES: readonly string[] = ['bundle-root', 'core-root', 'project-root', 'project_root'];

/** The roots a bundle's path variables are made from. */
export interface PathRoots {
  bundleRoot: string;
  coreRoot: string;
  projectRoot: string;
  /** Path of the config file (`{config_source}`), when one is known. */
  configSource?: string;
}

/**
 * The path variables of a bundle: `{bundle-root}`, `{core-root}`, `{project-root}`, the real
 * misspelling `{project_root}` (same value) and, when given, `{config_source}`.
 */
export function pathVariables(roots: PathRoots): Record<string, string> {
  const vars: Record<string, string> = {
    'bundle-root': roots.bundleRoot,
    'core-root': roots.coreRoot,
    'project-root': roots.projectRoot,
    project_root: roots.projectRoot,
  };
  if (roots.configSource !== undefined) vars.config_source = roots.configSource;
  return vars;
}

/** Today's local date as `YYYY-MM-DD`. */
export function todayLocal(now: Date = new Date()): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
}

/*
 * One pattern for both forms, so a single left-to-right pass sees `{config_source}:key` before it
 * could mistake its first half for a plain `{config_source}`. The look-arounds skip `{{x}}`.
 */
const TOKEN = /(?<!\{)\{config_source\}:(\w+)|(?<!\{)\{([A-Za-z0-9_-]+)\}(?!\})/g;

const CONFIG_REF_PREFIX = 'config_source:';

/**
 * Replaces every variable in `text` (see the module comment for the syntax).
 *
 * - `{config_source}:key` takes `options.configSource[key]` when a config source is given, else
 *   `vars[key]` (never both: a key missing from the given config is missing).
 * - An unknown variable stays as written, or with `strict` throws `ConfigVariableNotFoundError`
 *   naming the key and the sorted available names (the config's keys for `{config_source}:key`).
 * - Values are resolved recursively; a variable that reaches itself throws `VariableCycleError`.
 */
export function resolveVariables(text: string, vars: Record<string, string>, options: ResolveOptions = {}): string {
  return new Resolver(vars, options).text(text, []);
}

/**
 * Resolves every string inside `value` (objects and arrays, recursively; keys are left alone;
 * numbers, booleans and null are returned unchanged). Returns a new value; the input is not mutated.
 */
export function resolveDeep<T>(value: T, vars: Record<string, string>, options: ResolveOptions = {}): T {
  const resolver = new Resolver(vars, options);
  return resolver.deep(value) as T;
}

/**
 * The variables still present in `text`, in order of first appearance, without duplicates: plain
 * ones by name (`output_folder`), config references as `config_source:<key>`. `{{x}}` placeholders
 * are not reported. Use it after a non-strict resolution to list what did not resolve.
 */
export function findUnresolved(text: string): string[] {
  const found = new Set<string>();
  for (const match of text.matchAll(TOKEN)) {
    found.add(match[1] !== undefined ? CONFIG_REF_PREFIX + match[1] : match[2]);
  }
  return [...found];
}

/**
 * Turns a parsed config.yaml into variables: each top-level scalar (string, number, boolean) becomes
 * a string variable whose value is resolved against `base` plus the config's own keys (so
 * `output_folder: '{project-root}/docs'` and a key naming another key both work). Nested objects,
 * arrays and null values are ignored: BMAD configs are flat, and a variable is always a string.
 * Keys in `PROTECTED_VARIABLES` are ignored too. Returns only the config's keys, resolved; the
 * caller merges them over `base`.
 */
export function resolveConfigVariables(config: Record<string, unknown>, base: Record<string, string>, options: ResolveOptions = {}): Record<string, string> {
  const own = scalarEntries(config);
  const resolver = new Resolver(mergeSiblings(base, own), options, base);
  const out: Record<string, string> = {};
  for (const key of Object.keys(own)) out[key] = resolver.variable(key, []);
  return out;
}

/**
 * Resolves a workflow.yaml (or any mapping whose keys name each other), where values refer to
 * sibling keys of the same file:
 *
 * ```yaml
 * config_source: "{project-root}/bmad/bmm/config.yaml"
 * output_folder: "{config_source}:output_folder"
 * installed_path: "{project-root}/bmad/bmm/workflows/create-story"
 * template: "{installed_path}/template.md"
 * variables:
 *   story_dir: "{config_source}:dev_story_location"
 * default_output_file: "{story_dir}/{{story_key}}.md"
 * ```
 *
 * Siblings are the top-level scalars of `obj` plus the scalars of its `variables` mapping (BMAD
 * keeps workflow variables there); a top-level key wins over a `variables` key of the same name.
 * Siblings override `vars` (the workflow is more specific than the agent's config), except the
 * protected path variables. Every string of `obj`, at any depth, is then resolved against them.
 *
 * `{config_source}:key` needs the parsed config in `options.configSource`. To get it, resolve the
 * workflow's own `config_source` first (`resolveVariables(String(obj.config_source), vars)`), read
 * and parse that file, then call this with `{ configSource: resolveConfigVariables(parsed, vars) }`.
 */
export function resolveWithSiblings<T extends Record<string, unknown>>(obj: T, vars: Record<string, string>, options: ResolveOptions = {}): T {
  const nested = obj.variables;
  const fromVariables = isPlainObject(nested) ? scalarEntries(nested) : {};
  const siblings = { ...fromVariables, ...scalarEntries(obj) };
  // `{config_source}:key` falls back to the caller's vars, not to the siblings: a sibling
  // `user_name: "{config_source}:user_name"` would otherwise refer to itself.
  return new Resolver(mergeSiblings(vars, siblings), options, vars).deep(obj) as T;
}

/** Top-level scalars of a mapping as strings; protected path variables are skipped. */
function scalarEntries(obj: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(obj)) {
    if (PROTECTED_VARIABLES.includes(key)) continue;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      out[key] = String(value);
    }
  }
  return out;
}

function mergeSiblings(base: Record<string, string>, siblings: Record<string, string>): Record<string, string> {
  return { ...base, ...siblings };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * One resolution run: memoises resolved variables, tracks the chain being resolved (for cycles and
 * the depth limit) and counts the characters it inserts (for the expansion limit).
 */
class Resolver {
  private readonly cache = new Map<string, string>();
  private readonly date: string;
  private inserted = 0;

  private readonly configSource: Record<string, string>;

  /**
   * @param vars every variable, siblings included
   * @param configFallback where `{config_source}:key` looks when `options.configSource` is absent
   */
  constructor(
    private readonly vars: Record<string, string>,
    private readonly options: ResolveOptions,
    configFallback: Record<string, string> = vars,
  ) {
    this.date = options.date ?? todayLocal();
    this.configSource = options.configSource ?? configFallback;
  }

  deep(value: unknown): unknown {
    if (typeof value === 'string') return this.text(value, []);
    if (Array.isArray(value)) return value.map((item) => this.deep(item));
    if (isPlainObject(value)) {
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) out[key] = this.deep(item);
      return out;
    }
    return value;
  }

  text(text: string, chain: string[]): string {
    if (!text.includes('{')) return text;
    return text.replace(TOKEN, (whole: string, configKey: string | undefined, name: string | undefined) => {
      const value = configKey !== undefined ? this.configReference(whole, configKey, chain) : this.plain(whole, name as string, chain);
      if (value !== whole) this.count(value.length, whole);
      return value;
    });
  }

  /** The resolved value of a variable known to exist in `vars`. */
  variable(name: string, chain: string[]): string {
    const cached = this.cache.get(name);
    if (cached !== undefined) return cached;
    this.checkChain(name, chain);
    const value = this.text(this.vars[name], [...chain, name]);
    this.cache.set(name, value);
    return value;
  }

  /** Refuses to resolve `id` inside `chain` when it closes a loop or makes the chain too long. */
  private checkChain(id: string, chain: string[]): void {
    if (chain.includes(id)) throw new VariableCycleError([...chain.slice(chain.indexOf(id)), id]);
    if (chain.length >= MAX_VARIABLE_DEPTH) {
      const shown = [...chain.slice(0, 3), '...', ...chain.slice(-2), id];
      throw new LimitExceededError(`Variable chain too long: ${shown.join(' -> ')} (${chain.length + 1} links)`, 'MAX_VARIABLE_DEPTH', MAX_VARIABLE_DEPTH);
    }
  }

  /** Counts characters inserted for `variable` against the run's expansion limit. */
  private count(length: number, variable: string): void {
    this.inserted += length;
    if (this.inserted > MAX_VARIABLE_EXPANSION_CHARS) {
      throw new LimitExceededError(
        `Variable expansion too large: inserting ${variable} brings the text inserted to ${this.inserted} characters`,
        'MAX_VARIABLE_EXPANSION_CHARS',
        MAX_VARIABLE_EXPANSION_CHARS,
      );
    }
  }

  private plain(whole: string, name: string, chain: string[]): string {
    if (name === 'date') return this.date;
    if (Object.prototype.hasOwnProperty.call(this.vars, name)) return this.variable(name, chain);
    if (this.options.strict) throw new ConfigVariableNotFoundError(name, Object.keys(this.vars));
    return whole;
  }

  private configReference(whole: string, key: string, chain: string[]): string {
    const source = this.configSource;
    if (!Object.prototype.hasOwnProperty.call(source, key)) {
      if (this.options.strict) throw new ConfigVariableNotFoundError(key, Object.keys(source));
      return whole;
    }
    const id = CONFIG_REF_PREFIX + key;
    const cached = this.cache.get(id);
    if (cached !== undefined) return cached;
    this.checkChain(id, chain);
    const value = this.text(source[key], [...chain, id]);
    this.cache.set(id, value);
    return value;
  }
}
