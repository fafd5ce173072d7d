/**
 * The workspace tools in a session, on the real dev server: a project with Agent Skills is offered
 * `list_files` and `search_files`, whose results reach the model, and an `edit_file` call waiting
 * for approval shows the diff of its change (computed in workflow code).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ChatMessage, ToolMessage } from '../../common/messages';
import type { SessionState } from '../../common/session-types';
import type { SessionHandle } from '../../client/session-client';
import { approveUpdate } from '../../common/contract/session-definitions';
import { text, toolCalls } from '../../fake-model/server';
import { startSessionHarness, type SessionHarness } from '../support/session-harness';
import { writeSkillsProject } from '../support/skills-project';

jest.setTimeout(90_000);

let h: SessionHarness;
const projects: { cleanup(): void }[] = [];

beforeAll(async () => {
  h = await startSessionHarness();
}, 120_000);

afterAll(async () => {
  await h?.close();
  for (const project of projects) project.cleanup();
});

async function waitForState(session: SessionHandle, test: (s: SessionState) => boolean): Promise<SessionState> {
  for (let i = 0; i < 400; i++) {
    const state = await session.state();
    if (test(state)) return state;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('state never matched');
}

function results(messages: ChatMessage[]): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const m of messages) if (m.role === 'tool') out[(m as ToolMessage).tool_call_id] = JSON.parse(m.content) as Record<string, unknown>;
  return out;
}

test('workspace tools: a skills session lists and searches the project; an edit waits for approval showing its diff', async () => {
  const { loopwright } = await h.startWorker();
  const project = writeSkillsProject();
  projects.push(project);
  const trip = path.join(project.root, 'out', 'plans', 'trip.md');
  fs.mkdirSync(path.dirname(trip), { recursive: true });
  fs.writeFileSync(trip, '---\nstepsCompleted: []\n---\n# Trip\n');
  h.fake.enqueue(
    toolCalls([
      { name: 'list_files', arguments: { pattern: '.claude/skills/**/SKILL.md' }, id: 'call_list' },
      { name: 'search_files', arguments: { pattern: 'tide', ignore_case: true, glob: '*.md' }, id: 'call_search' },
    ]),
    toolCalls([{ name: 'edit_file', arguments: { file_path: '{project-root}/out/plans/trip.md', old_text: 'stepsCompleted: []', new_text: 'stepsCompleted: [1]' }, id: 'call_edit' }]),
    text('⚓ Noted.'),
  );
  const session = await loopwright.start({ bundlePath: project.root, agentId: 'lw-agent-guide', approval: { policy: 'writes' } });
  const turn = session.send('find the tides');
  const waiting = await waitForState(session, (s) => s.pendingApprovals.length > 0);
  expect(waiting.pendingApprovals[0]).toMatchObject({
    tool: 'edit_file',
    path: trip,
    preview: 'replace 18 bytes with 19 bytes:\n@@ -1,1 +1,1 @@\n-stepsCompleted: []\n+stepsCompleted: [1]',
  });
  await session.workflow.executeUpdate(approveUpdate, { args: ['call_edit'] });
  const result = await turn;
  expect(result).toMatchObject({ success: true, response: '⚓ Noted.' });

  const offered = (h.fake.requests[0]!.body!.tools ?? []).map((t) => t.function.name);
  expect(offered).toEqual(expect.arrayContaining(['list_files', 'search_files', 'activate_skill']));
  const got = results(await session.turnMessages(result));
  expect(got.call_list).toEqual({ success: true, files: ['.claude/skills/lw-agent-guide/SKILL.md', '.claude/skills/lw-notes/SKILL.md'] });
  expect(got.call_search).toMatchObject({
    success: true,
    matches: [
      '.claude/skills/lw-notes/SKILL.md:7: 1. Read `references/tides.md`.',
      '.claude/skills/lw-notes/assets/notes-template.md:3: Tide: {{tide}}',
      '.claude/skills/lw-notes/references/tides.md:1: High tide at noon.',
    ],
  });
  expect(fs.readFileSync(trip, 'utf8')).toBe('---\nstepsCompleted: [1]\n---\n# Trip\n');
  await session.end();
});
