/**
 * The session `record-history.ts --skills` records: an agent skill (a project of our own with
 * `_bmad/config.toml` and `.claude/skills/`) activates a skill, reads its reference by a bare path,
 * saves a document, and, in a later turn (after continuing as new with --continue-as-new), reads
 * the skill's asset by a bare path again: the active skill travels with the session.
 */
import type { LoopwrightClient } from '../client/session-client';
import { type FakeOpenAI, text, toolCalls } from '../fake-model/server';
import { writeSkillsProject } from '../test/support/skills-project';

export async function recordSkillsSession(loopwright: LoopwrightClient, fake: FakeOpenAI, name: string, chain: boolean): Promise<void> {
  const project = writeSkillsProject('lw-record-skills-');
  fake.enqueue(
    toolCalls([{ id: 'call_activate', name: 'activate_skill', arguments: { name: 'lw-notes' } }]),
    toolCalls([{ id: 'call_ref', name: 'read_file', arguments: { file_path: 'references/tides.md' } }]),
    toolCalls([{ id: 'call_save', name: 'save_output', arguments: { file_path: '{planning_artifacts}/trip.md', content: '# Trip\n\nTide: noon\n' } }]),
    text('⚓ Trip saved.'),
    toolCalls([{ id: 'call_asset', name: 'read_file', arguments: { file_path: 'assets/notes-template.md' } }]),
    text('⚓ That is the template.'),
  );
  try {
    const session = await loopwright.start({
      bundlePath: project.root,
      agentId: 'lw-agent-guide',
      workflowId: `fixture-${name}`,
      ...(chain ? { continueAsNew: { maxHistoryEvents: 20 } } : {}),
    });
    const first = await session.send('TP');
    if (!first.success) throw new Error(`first turn failed: ${first.error}`);
    const second = await session.send('show me the template');
    if (!second.success) throw new Error(`second turn failed: ${second.error}`);
    const asset = (await session.turnMessages(second)).find((m) => m.role === 'tool');
    if (!asset || !String(asset.content).includes('"success":true')) throw new Error(`the asset was not read by its bare path: ${asset?.content}`);
    await session.end();
    await session.result();
  } finally {
    project.cleanup();
  }
}
