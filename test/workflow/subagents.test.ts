/**
 * Subagents from instructions (`run_subagent`) on the real dev server, in a copy of the real BMAD
 * 6.11 install: John (`bmad-agent-pm`) activates the PRFAQ skill and dispatches its two research
 * agents (`agents/web-researcher.md` by a bare path from the active skill, `artifact-analyzer.md`
 * by a `{project-root}` path) in one reply. Both children run at once (each holds its model call
 * until the other has made one), each with the file's instructions as its own system prompt and the
 * task as its first message; their reports come back as the calls' results and their usage is the
 * parent's. Bad calls (no instructions, a file outside the roots, a secret file) give a clear result
 * and the turn goes on.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChatMessage, ToolMessage } from '../../common/messages';
import type { LoopwrightClient } from '../../client/session-client';
import { type RecordedRequest, text, toolCalls } from '../../fake-model/server';
import { CORPUS, corpusPresent } from '../support/corpus';
import { startSessionHarness, type SessionHarness } from '../support/session-harness';

jest.setTimeout(90_000);

const V611 = 'installed/v6.11.0-claude-code';
const PRFAQ = '.claude/skills/bmad-prfaq';

let h: SessionHarness;
let loopwright: LoopwrightClient;
const copies: string[] = [];

/** A writable copy of the 6.11 install (the corpus itself is read only). */
function copyInstall(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-subagents-'));
  fs.cpSync(path.join(CORPUS, V611), dir, { recursive: true });
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) fs.chmodSync(path.join(entry.parentPath, entry.name), entry.isDirectory() ? 0o755 : 0o644);
  copies.push(fs.realpathSync(dir));
  return fs.realpathSync(dir);
}

function results(messages: ChatMessage[]): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const m of messages) if (m.role === 'tool') out[(m as ToolMessage).tool_call_id] = JSON.parse(m.content) as Record<string, unknown>;
  return out;
}

const system = (request: RecordedRequest): string => String(request.body!.messages![0]!.content);
const lastUser = (request: RecordedRequest): string => String(request.body!.messages!.filter((m) => m.role === 'user').at(-1)?.content ?? '');

beforeAll(async () => {
  h = await startSessionHarness();
  loopwright = (await h.startWorker()).loopwright;
}, 120_000);

afterAll(async () => {
  await h?.close();
  for (const dir of copies) fs.rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => h.fake.reset());

const run = (id: string, args: Record<string, string>) => ({ id, name: 'run_subagent', arguments: args });

if (corpusPresent('subagents', [V611])) {
  test('a skill dispatches its two research agents in parallel; each runs with its own instructions and reports back', async () => {
    const root = copyInstall();
    // The parent's script: activate the skill, dispatch both agents in one reply, then answer.
    const parentSteps = [
      toolCalls([{ id: 'act', name: 'activate_skill', arguments: { name: 'bmad-prfaq' } }]),
      toolCalls([
        run('web', { instructions_file: 'agents/web-researcher.md', task: 'Product intent: a tide-table app for harbour pilots. Find competitors.' }),
        run('docs', { instructions_file: `{project-root}/${PRFAQ}/agents/artifact-analyzer.md`, name: 'analyst', task: 'Product intent: a tide-table app. Scan the project documents.' }),
      ]),
      text('Both reports are in: two competitors, no prior documents.'),
    ];
    // Each child holds its first model call until the other child has made one: they must run at once.
    let release!: () => void;
    const bothStarted = new Promise<void>((resolve) => (release = resolve));
    const childCalls = new Set<string>();
    h.fake.setResponder(async (request) => {
      const prompt = system(request);
      const child = prompt.includes('You are web-researcher') ? 'web' : prompt.includes('You are analyst') ? 'docs' : undefined;
      if (child === undefined) return parentSteps.shift() ?? text('unexpected parent call');
      childCalls.add(child);
      if (childCalls.size === 2) release();
      await bothStarted;
      return text(child === 'web' ? 'Report: TideWatch and PilotTides compete.' : 'Report: the project has no prior PRFAQ documents.');
    });
    const session = await loopwright.start({ bundlePath: root, agentId: 'bmad-agent-pm' });
    const turn = await session.send('Stress-test my product idea with a PRFAQ');
    expect(turn).toMatchObject({ success: true, status: 'completed', response: 'Both reports are in: two competitors, no prior documents.', delegations: 2 });

    const byId = results(await session.turnMessages(turn));
    const parentId = session.workflow.workflowId;
    expect(byId.web).toMatchObject({ success: true, agent: 'web-researcher', status: 'completed', response: 'Report: TideWatch and PilotTides compete.', workflowId: `${parentId}-t1-i2-web` });
    expect(byId.docs).toMatchObject({ success: true, agent: 'analyst', status: 'completed', response: 'Report: the project has no prior PRFAQ documents.', workflowId: `${parentId}-t1-i2-docs` });

    // The parent was offered the tool; each child got its file's instructions (front matter and all
    // of the file's body), the task as its first message, and no conversation rules.
    const parentTools = h.fake.requests[0]!.body!.tools!.map((t) => t.function.name);
    expect(parentTools).toContain('run_subagent');
    const web = h.fake.requests.find((r) => system(r).includes('You are web-researcher'))!;
    const docs = h.fake.requests.find((r) => system(r).includes('You are analyst'))!;
    const webFile = fs.readFileSync(path.join(root, PRFAQ, 'agents/web-researcher.md'), 'utf8').trim();
    expect(system(web)).toContain(`YOUR INSTRUCTIONS (from the agent that started you):\n${webFile}`);
    expect(system(docs)).toContain('You are a research analyst. Your job is to scan project documents');
    expect(system(web)).not.toContain('CONVERSATION STYLE');
    expect(lastUser(web)).toBe('Product intent: a tide-table app for harbour pilots. Find competitors.');
    expect(lastUser(docs)).toBe('Product intent: a tide-table app. Scan the project documents.');

    // Usage: the children's calls count in the parent's turn.
    const childTokens = [byId.web, byId.docs].map((r) => (r!.usage as { totalTokens: number }).totalTokens);
    expect(childTokens.every((n) => n > 0)).toBe(true);
    expect(turn.usage.totalTokens).toBeGreaterThan(childTokens[0]! + childTokens[1]!);

    // The Web UI names each child as a subagent of its parent.
    const child = await loopwright.client.workflow.getHandle(`${parentId}-t1-i2-docs`).describe();
    expect(await child.staticSummary()).toBe('subagent analyst · started by bmad-agent-pm · Product intent: a tide-table app. Scan the project documents');
    expect(await child.staticDetails()).toContain(`instructions from \`{project-root}/${PRFAQ}/agents/artifact-analyzer.md\``);
    expect(child.parentExecution?.workflowId).toBe(parentId);
    await session.end();
  });

  test('a call without instructions is refused, and a file outside the roots or a secret file fails the child with a reason', async () => {
    const root = copyInstall();
    fs.writeFileSync(path.join(root, '.env'), 'TOKEN=do-not-read\n');
    h.fake.enqueue(
      toolCalls([
        run('bare', { task: 'Do something' }),
        run('outside', { instructions_file: '/etc/passwd', task: 'Read it' }),
        run('secret', { instructions_file: '{project-root}/.env', task: 'Read it' }),
      ]),
      text('None of them could start.'),
    );
    const session = await loopwright.start({ bundlePath: root, agentId: 'bmad-agent-pm' });
    const turn = await session.send('Try three subagents');
    expect(turn).toMatchObject({ success: true, status: 'completed', response: 'None of them could start.' });
    const byId = results(await session.turnMessages(turn));
    expect(byId.bare).toMatchObject({ success: false, status: 'refused' });
    expect(String(byId.bare!.error)).toContain('run_subagent needs task (the task, complete) and instructions or instructions_file');
    expect(byId.outside).toMatchObject({ success: false, agent: 'passwd' });
    expect(String(byId.outside!.error)).toMatch(/Subagent instructions file \/etc\/passwd could not be read: Security violation: Access denied/);
    expect(byId.secret).toMatchObject({ success: false, agent: 'subagent' });
    expect(String(byId.secret!.error)).toMatch(/Subagent instructions file \{project-root\}\/\.env could not be read: .*secret/i);
    // Only the parent called the model: no child got as far as a model call, so nothing leaked.
    expect(h.fake.requests.every((r) => !JSON.stringify(r.body).includes('do-not-read'))).toBe(true);
    await session.end();
  });
}
