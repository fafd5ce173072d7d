/**
 * Subagents made from instructions (`run_subagent`): the agent a child session runs when another
 * agent starts it with instructions of its own (text, or a file such as a skill's
 * `agents/web-researcher.md`) instead of naming an agent of the bundle. It works in the same
 * project, with the same roots, skills and tools, and answers one task with a report.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { RuntimeContext } from '../common/runtime-context';
import type { SubagentSpec } from '../common/delegation-types';
import { madeAgent, type AgentDefinition } from './agent-schema';
import { BundleError } from './errors';
import { guardRead, isInside, secretOptionsOf } from './sandbox/path-guard';
import { skillBody } from './skills/skill-file';
import { readTextFile } from './text-content';
import { resolveVariables } from './variables';

/** Longest instructions a subagent takes, as text or from its file: 64 KiB (the largest BMAD agent file is under 20 KB). */
export const MAX_SUBAGENT_INSTRUCTIONS_BYTES = 64 * 1024;

/** Instructions a subagent could not be given: the file is refused or unreadable, or the text is too long. */
export class SubagentInstructionsError extends BundleError {}

/** The subagent `spec` names, as an agent: its name, a role that says it reports back, no menu. */
export function subagentAgent(spec: SubagentSpec, projectRoot: string): AgentDefinition {
  return madeAgent({
    id: `subagent:${spec.name}`,
    name: spec.name,
    title: 'a subagent started by another agent to do one task',
    role: "You work on your own on the one task in the user's message, with your tools. Nobody answers questions while you work. When you are done, reply with your report: it is all the agent that started you sees, so make it complete and self-contained.",
    communicationStyle: 'Factual and concise.',
    file: projectRoot,
  });
}

/**
 * The instructions of `spec`: its text, and the body of its file (front matter left out), read with
 * `read_file`'s rules (path variables, the read roots, secret files; a bare path from the starting
 * agent's active skills first). Throws `SubagentInstructionsError` naming the file or the field.
 */
export async function subagentInstructions(spec: SubagentSpec, context: RuntimeContext): Promise<string> {
  const parts: string[] = [];
  if (spec.instructionsFile !== undefined) {
    parts.push(
      skillBody(
        await readInstructionsFile(
          spec.instructionsFile,
          (spec.activeSkillDirs ?? []).map((dir) => ({ dir })),
          context,
        ),
      ),
    );
  }
  if (spec.instructions !== undefined && spec.instructions.trim() !== '') parts.push(spec.instructions.trim());
  const text = parts.join('\n\n');
  if (text === '') throw new SubagentInstructionsError('Subagent instructions are empty: give instructions or instructions_file', { field: 'instructions' });
  if (Buffer.byteLength(text) > MAX_SUBAGENT_INSTRUCTIONS_BYTES) {
    throw new SubagentInstructionsError(`Subagent instructions are ${Buffer.byteLength(text)} bytes, more than the ${MAX_SUBAGENT_INSTRUCTIONS_BYTES} a subagent takes`, { field: 'instructions' });
  }
  return text;
}

/** The text of the instructions file `given`, or a `SubagentInstructionsError` naming it and what is wrong. */
async function readInstructionsFile(given: string, activeSkills: readonly { dir: string }[], context: RuntimeContext): Promise<string> {
  try {
    const resolved = await fromActiveSkills(resolveVariables(given, context.variables, { strict: true }), activeSkills);
    const roots = context.skillFolders === undefined ? context.readRoots : [...context.readRoots, ...context.skillFolders];
    const real = await guardRead(resolved, roots, secretOptionsOf(context));
    const { content } = await readTextFile(real, Math.min(context.maxReadBytes, MAX_SUBAGENT_INSTRUCTIONS_BYTES), undefined, { allowHardLinks: context.allowHardLinks === true });
    return content;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new SubagentInstructionsError(`Subagent instructions file ${given} could not be read: ${reason}`, { field: 'instructions_file', cause: error });
  }
}

/** A bare path as the starting agent's active skills give it (as `read_file` takes one): from the first skill folder holding it. */
async function fromActiveSkills(resolved: string, skills: readonly { dir: string }[]): Promise<string> {
  if (path.isAbsolute(resolved)) return resolved;
  for (const skill of skills) {
    const candidate = path.join(skill.dir, resolved);
    if (!isInside(candidate, skill.dir)) continue;
    if (
      await fs.access(candidate).then(
        () => true,
        () => false,
      )
    )
      return candidate;
  }
  return resolved;
}
