/**
 * What a session of a BMAD project as installed today starts with besides its agent: the config
 * values the installer would have written (for installs whose config leaves them out), the
 * project's central config as resolved for the agent's module, the agent skill's persistent
 * facts, and Loopwright's own agent for a folder of skills without one.
 */
import * as path from 'node:path';
import { glob } from 'tinyglobby';
import type { SystemMessage } from '../../common/messages';
import type { SecretFileRule } from '../../common/runtime-context';
import { madeAgent, type AgentDefinition } from '../agent-schema';
import { guardRead } from '../sandbox/path-guard';
import { readTextFile } from '../text-content';
import { resolveVariables } from '../variables';

/**
 * Config values BMAD's installer writes when the user accepts its defaults (`bmad-method install
 * --help`: output folder `_bmad-output`, communication and document language English). Installs of
 * 6.0 to 6.3 made with `--yes` leave some of them out while their other values name them
 * (`planning_artifacts: "{project-root}/{output_folder}/planning-artifacts"`): these fill the gap,
 * under whatever the project's config says.
 */
export const BMAD_INSTALL_DEFAULTS: Readonly<Record<string, string>> = {
  output_folder: '_bmad-output',
  communication_language: 'English',
  document_output_language: 'English',
};

/** Most files the `file:` globs of an agent's persistent facts load. */
export const MAX_FACT_FILES = 20;
/** Folders a persistent-fact glob never looks in. */
const FACT_GLOB_IGNORE = ['**/node_modules/**', '**/.git/**'];

/** What loading persistent facts gave. */
export interface LoadedFacts {
  messages: SystemMessage[];
  files: string[];
  warnings: string[];
}

/**
 * Loads an agent's `persistent_facts`: each `file:` entry is a path or glob under `{project-root}`
 * (variables resolved), whose files are loaded as `[Critical Action] Loaded file` messages (the
 * read guard of every tool applies: secret files and files outside the roots are left out); every
 * other entry is a fact as written, all of them in one message. At most `MAX_FACT_FILES` files.
 */
export async function loadPersistentFacts(
  facts: readonly string[],
  options: { projectRoot: string; readRoots: string[]; variables: Record<string, string>; maxReadBytes: number; allowSecretFiles?: boolean; secretFiles?: SecretFileRule[] },
): Promise<LoadedFacts> {
  const messages: SystemMessage[] = [];
  const files: string[] = [];
  const warnings: string[] = [];
  const literal: string[] = [];
  for (const fact of facts) {
    if (!fact.startsWith('file:')) {
      literal.push(fact);
      continue;
    }
    let pattern: string;
    try {
      pattern = resolveVariables(fact.slice('file:'.length).trim(), options.variables);
    } catch (error) {
      warnings.push(`Persistent fact ${fact}: ${(error as Error).message}`);
      continue;
    }
    const relative = path.isAbsolute(pattern) ? path.relative(options.projectRoot, pattern) : pattern;
    if (relative.startsWith('..')) {
      warnings.push(`Persistent fact ${fact}: it lies outside the project root, so it is not loaded`);
      continue;
    }
    const matches = (await glob(relative.split(path.sep).join('/'), { cwd: options.projectRoot, absolute: true, onlyFiles: true, ignore: FACT_GLOB_IGNORE, followSymbolicLinks: false })).sort();
    for (const match of matches) {
      if (files.length >= MAX_FACT_FILES) {
        warnings.push(`Persistent facts: more than ${MAX_FACT_FILES} files match; the rest are not loaded`);
        break;
      }
      try {
        const real = await guardRead(match, options.readRoots, {
          allowSecretFiles: options.allowSecretFiles === true,
          ...(options.secretFiles !== undefined ? { secretFiles: options.secretFiles } : {}),
        });
        if (files.includes(real)) continue;
        const { content } = await readTextFile(real, options.maxReadBytes);
        files.push(real);
        messages.push({ role: 'system', content: `[Critical Action] Loaded file: ${real}\n\n${content}` });
      } catch (error) {
        warnings.push(`Persistent fact ${path.relative(options.projectRoot, match)}: not loaded (${(error as Error).message.split('\n')[0]})`);
      }
    }
  }
  if (literal.length > 0) messages.unshift({ role: 'system', content: `[Critical Action] Persistent facts (keep them in mind for the whole session):\n${literal.map((f) => `- ${f}`).join('\n')}` });
  return { messages, files, warnings };
}

/**
 * The message that hands an agent skill its config when the project has a central config
 * (`_bmad/config.toml` and its override layers, BMAD 6.4+): the resolved values of its module, so
 * the model does not load `config.yaml`, which the overrides do not reach.
 */
export function configMessage(module: string, variables: Record<string, string>, files: readonly string[]): SystemMessage {
  const lines = Object.keys(variables)
    .sort()
    .map((key) => `${key}: ${variables[key]}`);
  return {
    role: 'system',
    content: `[Critical Action] Loaded config of module ${module} (${files.join(', ')}, merged by BMAD's rules; this is the project's config: do not load config files again):\n${lines.join('\n')}`,
  };
}

/** Loopwright's own agent for a folder that holds skills and no agent: the catalog is its menu. */
export function builtinSkillsAgent(id: string, projectRoot: string): AgentDefinition {
  return madeAgent({
    id,
    name: 'Assistant',
    title: 'an assistant that works with Agent Skills',
    role: "You help the user with their project, using the project's Agent Skills whenever a task matches one.",
    communicationStyle: 'Clear and direct.',
    file: projectRoot,
  });
}
