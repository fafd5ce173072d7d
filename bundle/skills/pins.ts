/**
 * The worker's side of bundle pinning (see common/pins.ts): content hashes of an agent's files and
 * of a skill (its SKILL.md and the three layers of its customization), and the check that compares
 * them with what a session recorded. A file that is missing hashes as missing, so a team override
 * added later, or a file removed, is a change too.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { CheckPinsInput, CheckPinsResult } from '../../common/pins';

/** Content hash (16 hex digits) of `files`, in order; a file that cannot be read counts as missing. */
export async function filesHash(files: readonly string[]): Promise<string> {
  const hash = createHash('sha256');
  for (const file of files) {
    hash.update(file).update('\0');
    try {
      hash.update(await fs.readFile(file));
    } catch {
      hash.update('\0missing');
    }
    hash.update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/** The files a skill's activation depends on: its SKILL.md, its customize.toml and the project's team and user overrides. */
export function skillPinFiles(skill: { name: string; dir: string }, projectRoot: string): string[] {
  const custom = path.join(projectRoot, '_bmad', 'custom');
  return [path.join(skill.dir, 'SKILL.md'), path.join(skill.dir, 'customize.toml'), path.join(custom, `${skill.name}.toml`), path.join(custom, `${skill.name}.user.toml`)];
}

/** The content hash of a skill as an activation sees it. */
export function skillHash(skill: { name: string; dir: string }, projectRoot: string): Promise<string> {
  return filesHash(skillPinFiles(skill, projectRoot));
}

/** Hashes the pinned files again and says what changed (the `checkPins` activity). */
export async function checkPins(input: CheckPinsInput): Promise<CheckPinsResult> {
  const changed: string[] = [];
  // Each line names the version found, so a further change is said again and the same one only once.
  const agentNow = input.agent ? await filesHash(input.agent.files) : undefined;
  if (input.agent && agentNow !== input.agent.hash) {
    changed.push(
      `The agent ${input.agent.id} changed on disk since this session started (its files, customization or config; version ${agentNow}); ` +
        'the session keeps the version it started with: start a new session to use the new one',
    );
  }
  for (const skill of input.skills) {
    const now = skill.hash !== undefined ? await skillHash(skill, input.projectRoot) : undefined;
    if (now !== skill.hash) {
      changed.push(`The skill ${skill.name} changed on disk since it was activated in this session (version ${now}); the model works from the version it loaded until it activates the skill again`);
    }
  }
  return { changed };
}
