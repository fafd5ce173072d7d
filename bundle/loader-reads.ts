/**
 * The protected paths of a session (see `protected-paths.ts`), found at initialisation by asking
 * the loader itself what it would read next time, beyond the rule decided from the roots alone:
 * - `loadBundle` pointed at each start folder (other than the bundle's own): the bundle it finds
 *   there, if any, with its agent files, config, manifest and own entries (or its tree's modules);
 * - every agent of the bundle, parsed: the files its critical actions load (`initializeAgent`)
 *   and its commands name (workflows, tasks, templates, data; files, not folders), with the
 *   variables of this session;
 * - every workflow those commands name, resolved as `loadWorkflow` would: the workflow.yaml, its
 *   `config_source`, `instructions` and `template` (see `workflowReads`).
 * Each path is protected as written and as its real path. A file that cannot be read or parsed
 * here protects nothing beyond the rule: it cannot be what a session reads either.
 */
import * as path from 'node:path';
import { readAgentFile } from './agent-file';
import { TemplateReads } from './agent-yaml-models';
import type { AgentDefinition } from './agent-schema';
import { type BundleInfo, loadBundle, type LoadBundleOptions } from './bundle-loader';
import { fileLoadTargets, isFilePathValue } from './load-targets';
import { isInside } from './sandbox/path-inside';
import { bundleOwnEntries, covers, layoutProtectedPaths, minimalPaths, startFolders, treeEntries } from './sandbox/protected-paths';
import { resolveRealPath } from './sandbox/path-guard';
import { readTextFile } from './text-content';
import { sourceTreeEntries } from './source-tree';
import { parseYamlSafe } from './safe-yaml';
import { findUnresolved, resolveVariables, resolveWithSiblings } from './variables';

/** The fields of a workflow.yaml naming files `loadWorkflow` reads. */
const WORKFLOW_FILE_FIELDS = ['config_source', 'instructions', 'template'] as const;

/** How many files are read at once. */
const BATCH = 16;

/** Most workflows resolved per session start; a bundle naming more has the rest protected by the rule only. */
export const MAX_PROTECTED_WORKFLOWS = 500;

/** What `protectedPathsFor` needs: the bundle, the user's loader settings, and the session's reads so far. */
export interface LoaderReadsInput {
  bundle: BundleInfo;
  options: LoadBundleOptions;
  /** The session's variables after its critical actions (paths of other agents resolve with them). */
  variables: Record<string, string>;
  /** Files the session has read already: its agent file, its config, its critical actions' files. */
  read: string[];
  maxReadBytes: number;
  allowHardLinks?: boolean;
  /** What other starts made together already read (see `LoaderReadCache`); none by default. */
  cache?: LoaderReadCache;
}

/**
 * What the loader read for session starts made together, from one look at the files: `validate`
 * initialises every agent of a bundle in turn, and each start would otherwise load the bundle
 * again, and its protected paths parse every agent of the bundle, read every workflow they name
 * and load every start folder again (work growing with the square of the number of agents). Kept
 * for one such run only; a session start on its own reads everything afresh.
 */
export class LoaderReadCache {
  /** The installer's templates a source tree's agents are compiled with. */
  readonly templates = new TemplateReads();
  private readonly agents = new Map<string, Promise<AgentDefinition | undefined>>();
  private readonly texts = new Map<string, Promise<string>>();
  private readonly bundles = new Map<string, Promise<BundleInfo>>();
  private readonly parsed = new Map<string, { value: unknown } | { error: unknown }>();

  agent(key: string, read: () => Promise<AgentDefinition | undefined>): Promise<AgentDefinition | undefined> {
    return remember(this.agents, key, read);
  }

  text(key: string, read: () => Promise<string>): Promise<string> {
    return remember(this.texts, key, read);
  }

  /** `loadBundle(folder, options)`, once per folder and options (its errors go to every caller). */
  bundle(folder: string, options: LoadBundleOptions): Promise<BundleInfo> {
    return remember(this.bundles, `${JSON.stringify(options)}\0${folder}`, () => loadBundle(folder, options));
  }

  /** `parseYamlSafe(text, file)` of the text read under `key` (the value is only read, never changed). */
  yaml(key: string, text: string, file: string): unknown {
    let result = this.parsed.get(key);
    if (result === undefined) {
      try {
        result = { value: parseYamlSafe(text, file) };
      } catch (error) {
        result = { error };
      }
      this.parsed.set(key, result);
    }
    if ('error' in result) throw result.error;
    return result.value;
  }
}

function remember<T>(map: Map<string, Promise<T>>, key: string, make: () => Promise<T>): Promise<T> {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}

/** The session's protected paths, minimal, as written and as real paths (see the module comment). */
export async function protectedPathsFor(input: LoaderReadsInput): Promise<string[]> {
  const { bundle } = input;
  const cache = input.cache ?? new LoaderReadCache();
  const paths = [...layoutProtectedPaths(bundle), ...bundleReads(bundle, bundle), ...input.read];
  for (const folder of startFolders(bundle)) {
    if (sameBundle(folder, bundle)) continue;
    const found = await cache.bundle(folder, input.options).catch(() => undefined);
    paths.push(...bundleReads(found, bundle));
  }
  paths.push(...(await agentReads(input, minimalPaths(paths), cache)));
  const written = minimalPaths(paths);
  return minimalPaths([...written, ...(await inBatches(written, resolveRealPath))]);
}

/** Whether `loadBundle(folder)` would find `bundle` itself (nothing to learn from loading it again). */
function sameBundle(folder: string, bundle: BundleInfo): boolean {
  if (folder === bundle.bundleRoot) return true;
  // Everything inside an installed tree's bmad/ is protected whole, and its project holds the same tree.
  if (bundle.bmadRoot === undefined) return false;
  return isInside(folder, bundle.bmadRoot) || folder === path.dirname(bundle.bmadRoot);
}

/**
 * What the loader reads of a bundle it found: the session's own tree whole; another tree's modules
 * (`treeEntries`: a folder that merely holds bundle folders looks like one); a stand-alone bundle's
 * own entries when it has agents; and the core, config and agent files.
 */
function bundleReads(bundle: BundleInfo | undefined, session: BundleInfo): string[] {
  if (bundle === undefined) return [];
  const paths: string[] = [];
  if (bundle.bmadRoot !== undefined) paths.push(...(bundle.bmadRoot === session.bmadRoot ? [bundle.bmadRoot] : treeEntries(bundle.bmadRoot)));
  else if (bundle.kind !== 'skills' && bundle.agents.length > 0) paths.push(...bundleOwnEntries(bundle.bundleRoot));
  if (bundle.coreRoot !== bundle.bundleRoot) paths.push(bundle.coreRoot);
  if (bundle.configPath !== undefined) paths.push(bundle.configPath);
  // A source tree: its modules and the installer's templates the agents are compiled with.
  if (bundle.kind === 'source') paths.push(...sourceTreeEntries(bundle.bundleRoot));
  // Loopwright's own agent of a folder of skills has no file (its `file` is the project folder).
  paths.push(...bundle.agents.filter((a) => !a.builtin).map((a) => a.file));
  return paths;
}

/** The files every agent of the bundle names, and the files of the workflows they name, not yet covered by `covered`. */
async function agentReads(input: LoaderReadsInput, covered: string[], cache: LoaderReadCache): Promise<string[]> {
  const { bundle, variables } = input;
  const found: string[] = [];
  const workflows: string[] = [];
  for (const agent of await inBatches(bundle.agents, (entry) => parsedAgent(entry.file, input, cache))) {
    if (agent === undefined) continue;
    const named: string[] = [];
    for (const action of agent.criticalActions) named.push(...attempt(() => fileLoadTargets(action, variables), []));
    for (const command of agent.commands) {
      for (const target of command.targets) if (target.kind !== 'action' && target.kind !== 'skill') named.push(target.value);
    }
    for (const value of named) {
      // Files only: a folder a command names (`data="{output_folder}"`) is not what the loader reads.
      const resolved = resolvedPath(value, variables, bundle.bundleRoot);
      if (resolved === undefined || !isFilePathValue(resolved)) continue;
      found.push(resolved);
      if (/\.ya?ml$/i.test(resolved) && !workflows.includes(resolved)) workflows.push(resolved);
    }
  }
  const named = workflows.slice(0, MAX_PROTECTED_WORKFLOWS);
  for (const reads of await inBatches(named, (file) => workflowReads(file, input, covered, cache))) found.push(...reads);
  return found.filter((p) => !covered.some((entry) => covers(entry, p)));
}

function parsedAgent(file: string, input: LoaderReadsInput, cache: LoaderReadCache): Promise<AgentDefinition | undefined> {
  const allowHardLinks = input.allowHardLinks === true;
  return cache.agent(`${input.bundle.bundleRoot}\0${allowHardLinks}\0${file}`, async () => {
    try {
      return (await readAgentFile(file, input.bundle.bundleRoot, { allowHardLinks, templates: cache.templates })).agent;
    } catch {
      return undefined;
    }
  });
}

/**
 * The files `loadWorkflow` reads for the workflow.yaml `file`: itself, and its `config_source`,
 * `instructions` and `template` resolved the same way (siblings such as `{installed_path}`, then the
 * session's variables). Unlike `loadWorkflow`, the config_source is not read (a field that needs
 * one of its keys is left out) and nothing is guarded: no content goes anywhere. A workflow.yaml
 * already protected whose fields all name files beside it (`{installed_path}/...`), in the tree
 * (`{project-root}/bmad/...`), in the core, or nothing, is not parsed: every real BMAD workflow is
 * such, and parsing them all made a session start of an installed tree ten times slower.
 */
async function workflowReads(file: string, input: LoaderReadsInput, covered: readonly string[], cache: LoaderReadCache): Promise<string[]> {
  const reads = [file];
  try {
    const key = `${input.maxReadBytes}\0${file}`;
    const text = await cache.text(key, async () => (await readTextFile(file, input.maxReadBytes)).content);
    if (covered.some((entry) => covers(entry, file)) && namesOnlyProtectedFiles(text, input.bundle.bmadRoot !== undefined)) return reads;
    const parsed = cache.yaml(key, text, file);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return reads;
    const base = { installed_path: path.dirname(file), ...input.variables };
    const config = resolveWithSiblings(parsed as Record<string, unknown>, base);
    for (const field of WORKFLOW_FILE_FIELDS) {
      const value = config[field];
      if (typeof value !== 'string' || value === '' || findUnresolved(value).length > 0) continue;
      reads.push(path.resolve(input.bundle.bundleRoot, value));
    }
  } catch {
    // Not a workflow that loads (missing, not text, malformed): a session cannot run it either.
  }
  return reads;
}

/** Whether every `config_source`, `instructions`, `template` or `installed_path` line of `text` names a path inside the protected structure, or none. */
function namesOnlyProtectedFiles(text: string, inTree: boolean): boolean {
  const inside = inTree ? /^(?:\{installed_path\}\/|\{core-root\}\/|\{project-root\}\/bmad\/|false$|null$|~$|$)/ : /^(?:\{installed_path\}\/|false$|null$|~$|$)/;
  for (const match of text.matchAll(/^(?:config_source|instructions|template|installed_path)[ \t]*:[ \t]*(.*)$/gm)) {
    const value = match[1]
      .replace(/[ \t]+#.*$/, '')
      .trim()
      .replace(/^(["'])(.*)\1$/, '$2');
    if (!inside.test(value)) return false;
  }
  return true;
}

/** `value` with its variables resolved and taken from the bundle root, or `undefined` when a variable does not resolve. */
function resolvedPath(value: string, variables: Record<string, string>, bundleRoot: string): string | undefined {
  const resolved = attempt(() => resolveVariables(value, variables), undefined);
  if (resolved === undefined || resolved.trim() === '' || findUnresolved(resolved).length > 0 || resolved.includes('\0')) return undefined;
  return path.resolve(bundleRoot, resolved);
}

/** `fn` of every item, in order, `BATCH` at a time (the reads are small; waiting for each in turn is what costs). */
async function inBatches<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += BATCH) results.push(...(await Promise.all(items.slice(i, i + BATCH).map(fn))));
  return results;
}

function attempt<T, F>(fn: () => T, fallback: F): T | F {
  try {
    return fn();
  } catch {
    return fallback;
  }
}
