/**
 * A skill of the real BMAD 6.11 install, end to end on the dev server, as its SKILL.md says to run:
 * Mary (`bmad-agent-analyst`) activates `bmad-product-brief`, which resolves its customization with
 * `uv run .../resolve_customization.py` and seeds its memlog with `memlog.py init` (both run in the
 * sandbox without asking, by the session's allow rule for BMAD's scripts), dispatches two
 * web-research subagents in one reply (they run at once), logs a decision with `memlog.py append`,
 * and saves its brief in the run folder. The memlog and the brief are on disk as the scripts and
 * the tools wrote them, the commands' results are the scripts' JSON, and the session's history
 * replays against today's workflow code. (A crash mid-command: crash/command-crash.test.ts.)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import type { ChatMessage, ToolMessage } from '../../common/messages';
import type { LoopwrightClient } from '../../client/session-client';
import { text, toolCalls } from '../../fake-model/server';
import { CORPUS, corpusPresent } from '../support/corpus';
import { startSessionHarness, type SessionHarness } from '../support/session-harness';
import { SANDBOX_UID } from '../unit/commands-sandbox/sandbox-fixture';
import { reachableUv, uvTestsSkipped } from '../unit/commands-sandbox/uv-fixture';

jest.setTimeout(120_000);

const V611 = 'installed/v6.11.0-claude-code';
const SUITE = 'a BMAD 6.11 skill through its scripts, subagents and memlog';
const SKILL_ROOT = '{project-root}/.claude/skills/bmad-product-brief';
const RUN_FOLDER = '{planning_artifacts}/briefs/brief-harbour-trips-2026-11-27';

function results(messages: ChatMessage[]): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const m of messages) if (m.role === 'tool') out[(m as ToolMessage).tool_call_id] = JSON.parse(m.content) as Record<string, unknown>;
  return out;
}

/** A writable copy of the install, owned by the sandbox's user (as a user's project would be). */
function copyInstall(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-bmad-brief-'));
  fs.cpSync(path.join(CORPUS, V611), dir, { recursive: true });
  for (const full of [dir, ...fs.readdirSync(dir, { recursive: true }).map((rel) => path.join(dir, String(rel)))]) {
    fs.chmodSync(full, fs.lstatSync(full).isDirectory() ? 0o755 : 0o644);
    if (process.getuid?.() === 0) fs.lchownSync(full, SANDBOX_UID, SANDBOX_UID);
  }
  return fs.realpathSync(dir);
}

if (corpusPresent(SUITE, [`${V611}/_bmad/scripts/memlog.py`, `${V611}/.claude/skills/bmad-product-brief/SKILL.md`]) && uvTestsSkipped(SUITE) === undefined) {
  let h: SessionHarness;
  let loopwright: LoopwrightClient;
  let restoreUv: () => Promise<void>;
  let project: string;

  beforeAll(async () => {
    restoreUv = await reachableUv();
    h = await startSessionHarness();
    loopwright = (await h.startWorker()).loopwright;
    project = copyInstall();
  }, 120_000);

  afterAll(async () => {
    await h?.close();
    await restoreUv?.();
    if (project) fs.rmSync(project, { recursive: true, force: true });
  });

  test('bmad-product-brief: customization and memlog through its scripts in the sandbox, two parallel research subagents, the brief saved', async () => {
    const parent = [
      toolCalls([{ id: 'act', name: 'activate_skill', arguments: { name: 'bmad-product-brief' } }]),
      toolCalls([{ id: 'resolve', name: 'run_command', arguments: { command: `uv run {project-root}/_bmad/scripts/resolve_customization.py --skill ${SKILL_ROOT} --key workflow` } }]),
      toolCalls([{ id: 'init', name: 'run_command', arguments: { command: `uv run {project-root}/_bmad/scripts/memlog.py init --workspace ${RUN_FOLDER} --field topic="Harbour trips"` } }]),
      toolCalls([
        {
          id: 'web1',
          name: 'run_subagent',
          arguments: { name: 'landscape', instructions: 'You are a web researcher. Report comparables as a short digest.', task: 'Comparables for winter harbour boat trips.' },
        },
        {
          id: 'web2',
          name: 'run_subagent',
          arguments: { name: 'current-state', instructions: 'You are a web researcher. Report the current state as a short digest.', task: 'Current state of harbour tourism in winter.' },
        },
      ]),
      toolCalls([
        {
          id: 'log',
          name: 'run_command',
          arguments: { command: `uv run {project-root}/_bmad/scripts/memlog.py append --workspace ${RUN_FOLDER} --type decision --text "Lead with sunset tours; two comparables found"` },
        },
      ]),
      toolCalls([
        {
          id: 'save',
          name: 'save_output',
          arguments: { file_path: `${RUN_FOLDER}/brief.md`, content: '---\ntitle: Harbour trips\nstatus: draft\n---\n\n# Harbour trips\n\nSunset tours in winter.\n' },
        },
      ]),
      text('The brief is drafted and the memlog seeded.'),
    ];
    // Each subagent holds its model call until the other has made one: they must run at once.
    let release!: () => void;
    const both = new Promise<void>((resolve) => (release = resolve));
    const children = new Set<string>();
    h.fake.setResponder(async (request) => {
      const system = String(request.body!.messages![0]!.content);
      const child = /You are (landscape|current-state),/.exec(system)?.[1];
      if (child === undefined) return parent.shift() ?? text('unexpected call');
      children.add(child);
      if (children.size === 2) release();
      await both;
      return text(child === 'landscape' ? 'Digest: two comparables, Oslo and Hamburg.' : 'Digest: winter demand is growing.');
    });

    const session = await loopwright.start({
      bundlePath: project,
      agentId: 'bmad-agent-analyst',
      commands: { enabled: true, allow: ['uv run {project-root}/_bmad/scripts/*'] },
    });
    const turn = await session.send('Create a product brief for winter harbour trips');
    expect(turn).toMatchObject({ success: true, status: 'completed', response: 'The brief is drafted and the memlog seeded.', delegations: 2 });
    const byId = results(await session.turnMessages(turn));

    // The scripts ran in the sandbox, as the skill says, without asking (the allow rule covers them).
    expect(byId.resolve).toMatchObject({ success: true, exitCode: 0, sandboxed: true });
    expect(JSON.parse(String(byId.resolve!.stdout))).toEqual({ workflow: expect.objectContaining({ brief_output_path: '{planning_artifacts}/briefs', brief_template: 'assets/brief-template.md' }) });
    const memlog = '_bmad-output/planning-artifacts/briefs/brief-harbour-trips-2026-11-27/.memlog.md';
    // The workspace is given through {planning_artifacts}, which the config makes absolute.
    expect(JSON.parse(String(byId.init!.stdout))).toEqual({ ok: true, memlog: path.join(project, memlog), entries: 0 });
    expect(JSON.parse(String(byId.log!.stdout))).toEqual({ ok: true, memlog: path.join(project, memlog), entries: 1 });
    expect(fs.readFileSync(path.join(project, memlog), 'utf8')).toMatch(/^---\ntopic: Harbour trips\n[\s\S]*---\n\n- \(decision\) Lead with sunset tours; two comparables found\n$/);
    const state = await session.state();
    expect(state.pendingApprovals).toEqual([]);

    // Both subagents ran at once and reported back; the brief is where the skill's customization says.
    expect(byId.web1).toMatchObject({ success: true, agent: 'landscape', response: 'Digest: two comparables, Oslo and Hamburg.' });
    expect(byId.web2).toMatchObject({ success: true, agent: 'current-state', response: 'Digest: winter demand is growing.' });
    const brief = path.join(project, '_bmad-output/planning-artifacts/briefs/brief-harbour-trips-2026-11-27/brief.md');
    expect(byId.save).toMatchObject({ success: true, path: brief });
    expect(fs.readFileSync(brief, 'utf8')).toContain('Sunset tours in winter.');
    expect(fs.readdirSync(path.dirname(brief)).sort()).toEqual(['.memlog.md', 'brief.md']);

    // The skill's instructions reached the model with their script lines, and the history replays.
    const activated = JSON.stringify(byId.act);
    expect(activated).toContain(`uv run {project-root}/_bmad/scripts/resolve_customization.py --skill ${SKILL_ROOT} --key workflow`);
    expect(activated).toContain('uv run {project-root}/_bmad/scripts/memlog.py init --workspace {doc_workspace}');
    await expect(Worker.runReplayHistory({ workflowBundle: h.workflowBundle }, await session.workflow.fetchHistory(), session.workflow.workflowId)).resolves.toBeUndefined();
    await session.end();
  });
}
