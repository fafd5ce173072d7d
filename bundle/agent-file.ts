/**
 * One way in for every agent file, whatever its form: the file name picks the parser.
 * - `*.agent.yaml` / `*.agent.yml` (BMAD v6 sources): compiled in memory by `agent-yaml.ts`, with
 *   the installer's templates of the source tree it sits in (`agent-yaml-models.ts`);
 * - anything else (`.md`, `.xml`): the XML dialects, `agent-parser.ts`.
 * Every place that parses an agent (initialisation, inspect, validate, the protected-path scan)
 * goes through `parseAgentFile` or `readAgentFile`, so they all see the same definition.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parseAgent } from './agent-parser';
import type { AgentDefinition } from './agent-schema';
import { compileAgentYaml, yamlAgentId } from './agent-yaml';
import { findInstallerModels, type InstallerModels, type TemplateReads } from './agent-yaml-models';
import { readTextFile, readTextHead } from './text-content';
import { parseYamlSafe } from './safe-yaml';

/** Largest agent file read (the parsers have their own, smaller limits on characters). */
export const MAX_AGENT_FILE_BYTES = 1024 * 1024;

/** Whether `file` is a BMAD v6 source agent (`*.agent.yaml` or `*.agent.yml`, any case). */
export function isYamlAgentFile(file: string): boolean {
  return /\.agent\.ya?ml$/i.test(path.basename(file));
}

/** Whether a file named `name` in an `agents/` folder is an agent: a `.md` other than a README, or a `*.agent.yaml`. */
export function isAgentFileName(name: string): boolean {
  const lower = name.toLowerCase();
  return (lower.endsWith('.md') && lower !== 'readme.md') || isYamlAgentFile(name);
}

/** The agent id a file name gives: without `.agent.yaml` for a source agent, else without its extension. */
export function agentIdOfFile(file: string): string {
  return isYamlAgentFile(file) ? yamlAgentId(file) : path.basename(file, path.extname(file));
}

/**
 * Parses the agent `text` of `file` by its name (see the module comment). `models` are the
 * installer's templates for a source agent (`findInstallerModels`); without them a source agent
 * gets Loopwright's own activation steps, handlers and rules.
 */
export function parseAgentFile(text: string, file: string, options: { models?: InstallerModels } = {}): AgentDefinition {
  return isYamlAgentFile(file) ? compileAgentYaml(text, file, options) : parseAgent(text, file);
}

/** What `readAgentFile` read: the agent, and every file read for it (the agent file first). */
export interface ReadAgent {
  agent: AgentDefinition;
  files: string[];
}

/**
 * Reads and parses the agent file `realPath` (already through the path guard) of the bundle whose
 * root is `root`: as text, regular files only, at most `MAX_AGENT_FILE_BYTES`; a source agent with
 * the installer's templates found inside `root`. `file` is the name errors and the definition give
 * (default `realPath`). `templates`: the installer's templates already read for other agents of the
 * same load (see `TemplateReads`).
 */
export async function readAgentFile(realPath: string, root: string, options: { allowHardLinks?: boolean; file?: string; templates?: TemplateReads } = {}): Promise<ReadAgent> {
  const text = await readTextFile(realPath, MAX_AGENT_FILE_BYTES, undefined, { allowHardLinks: options.allowHardLinks === true });
  const file = options.file ?? realPath;
  if (!isYamlAgentFile(file)) return { agent: parseAgent(text.content, file), files: [realPath] };
  const models = await findInstallerModels(realPath, root, options.templates);
  return { agent: compileAgentYaml(text.content, file, models ? { models } : {}), files: [realPath, ...(models?.files ?? [])] };
}

/** What a cheap look at an agent file finds (see `agentHead` in `bundle-loader.ts`). */
export interface AgentHead {
  name?: string;
  title?: string;
  xmlId?: string;
}

/**
 * Name, title and id of an agent file without a full parse, from its first `maxBytes`, opened as a
 * regular file only: the `<agent ...>` start tag, or a source agent's `agent.metadata`. A source
 * agent that does not parse as YAML gives nothing here (its parse error is for `readAgentFile`).
 */
export async function readAgentHead(file: string, maxBytes: number): Promise<AgentHead> {
  const text = await readTextHead(await fs.realpath(file), maxBytes);
  return isYamlAgentFile(file) ? yamlHead(text, file) : xmlHead(text);
}

function xmlHead(text: string): AgentHead {
  const tag = /<agent(\s[^>]*)>/.exec(text)?.[1];
  if (!tag) return {};
  const attr = (name: string) => new RegExp(`\\s${name}\\s*=\\s*"([^"]*)"`).exec(tag)?.[1];
  return pick(attr('name'), attr('title'), attr('id'));
}

function yamlHead(text: string, file: string): AgentHead {
  let data: unknown;
  try {
    data = parseYamlSafe(text, file);
  } catch {
    return {};
  }
  const agent = field(data, 'agent');
  const metadata = field(agent, 'metadata');
  const text_ = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);
  return pick(text_(field(metadata, 'name')), text_(field(metadata, 'title')), text_(field(metadata, 'id')));
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined;
}

function pick(name: string | undefined, title: string | undefined, id: string | undefined): AgentHead {
  return { ...(name ? { name } : {}), ...(title ? { title } : {}), ...(id ? { xmlId: id } : {}) };
}
