/**
 * BMAD as its installer leaves it today, on the real dev server: a copy of a real 6.11 install
 * (skills in .claude/skills, _bmad/config.toml) runs John (`bmad-agent-pm`, an agent skill). The
 * first request carries his persona, his menu and the skill catalog; the session activates a skill,
 * reads one of its references by a bare path, and saves its document where the project's config
 * says (planning artifacts). A project of 6.0.4 (compiled agents, step files) saves there too.
 *
 * The tests run side by side on one worker and fake model, each on a fake-model lane on the project
 * it runs (a copy of its own, or for the read-only runs over a whole install, that install's folder
 * of the corpus); after them, alone on the fake model, the compaction test (it sets the fake's
 * context window) and the built-in assistant's (its requests name no folder of the test's).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChatMessage, ToolMessage } from '../../common/messages';
import { isSummaryRequest, type RecordedRequest, type Step, text, toolCalls } from '../../fake-model/server';
import { SKILL_INSTRUCTIONS_NOTE } from '../../common/model-view';
import { CORPUS, corpusPresent } from '../support/corpus';
import { type SessionHarness } from '../support/session-harness';
import { type FakeLanes, type LaneHarness, startLaneHarness } from '../support/fake-lanes';
import { writeSkillsProject } from '../support/skills-project';
import { listProject } from '../../bundle/inspect';
import type { LoopwrightClient } from '../../client/session-client';

jest.setTimeout(90_000);

const V611 = 'installed/v6.11.0-claude-code';
const V604 = 'installed/v6.0.4-claude-code';

/** A writable copy of an install of the corpus (the corpus itself is read only). */
function copyInstall(part: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-bmad-'));
  fs.cpSync(path.join(CORPUS, part), dir, { recursive: true });
  fs.chmodSync(dir, 0o755);
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const full = path.join(entry.parentPath, entry.name);
    fs.chmodSync(full, entry.isDirectory() ? 0o755 : 0o644);
  }
  return fs.realpathSync(dir);
}

function results(messages: ChatMessage[]): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const m of messages) if (m.role === 'tool') out[(m as ToolMessage).tool_call_id] = JSON.parse(m.content) as Record<string, unknown>;
  return out;
}

let h: SessionHarness;
let suite: LaneHarness | undefined;
/** Each test's own script and requests on the shared fake model (the tests run side by side). */
let lanes: FakeLanes;
let loopwright: LoopwrightClient;
const copies: string[] = [];

beforeAll(async () => {
  suite = await startLaneHarness();
  ({ h, lanes, loopwright } = suite);
}, 120_000);

afterAll(async () => {
  await suite?.close();
  // Lanes opened on folders remove nothing: the tests' copies go below, the corpus stays.
  for (const dir of copies) fs.rmSync(dir, { recursive: true, force: true });
});

test.concurrent('agent skill: persistent facts, the user config layer, a prompt menu item; continued as new, a bare path still resolves', async () => {
  const project = writeSkillsProject();
  copies.push(project.root);
  const m = lanes.open(project.root);
  m.enqueue(
    toolCalls([{ name: 'activate_skill', arguments: { name: 'lw-notes' }, id: 'call_activate' }]),
    toolCalls([{ name: 'read_file', arguments: { file_path: 'references/tides.md' }, id: 'call_ref' }]),
    text('⚓ Noted the tide.'),
    toolCalls([{ name: 'read_file', arguments: { file_path: 'assets/notes-template.md' }, id: 'call_asset' }]),
    text('⚓ Here is the template.'),
  );
  const session = await loopwright.start({ bundlePath: project.root, agentId: 'lw-agent-guide', continueAsNew: { maxHistoryEvents: 20 } });
  const first = await session.send('TP');
  expect(first.success).toBe(true);
  const opening = m.requests[0]!.body!.messages!.map((m) => String(m.content));
  expect(opening[0]).toContain('You are Gus, Harbour Guide.');
  expect(opening[0]).toContain('Greet the user with ⚓ and show the menu. Skill files live in {project-root}/.claude/skills/lw-agent-guide.');
  expect(opening[0]).toMatch(/2\. \[WX\] Tell the weather → prompt: Say the weather is fair\./);
  expect(opening[0]).toContain('- Safety first.\n- Check the tide.');
  // The user layer of the central config, and the facts: one literal, one file: glob.
  expect(opening.some((m) => m.includes('Loaded config of module guides') && m.includes('user_name: Ada') && m.includes(`planning_artifacts: ${project.root}/out/plans`))).toBe(true);
  expect(opening.some((m) => m.includes('Persistent facts') && m.includes('- The harbour closes at dusk.'))).toBe(true);
  expect(opening.some((m) => m.includes(`[Critical Action] Loaded file: ${project.root}/docs/harbour.md`))).toBe(true);
  const activation = results(await session.turnMessages(first)).call_activate!;
  // {workflow.template} filled from the skill's customization; {planning_artifacts} left to the tools.
  expect(String(activation.content)).toContain('2. Fill `assets/notes-template.md` and save it under {planning_artifacts}.');

  const second = await session.send('the template please');
  expect(second.success).toBe(true);
  expect((await session.state()).run).toBeGreaterThan(1);
  expect(results(await session.turnMessages(second)).call_asset).toMatchObject({ success: true, path: path.join(project.root, '.claude/skills/lw-notes/assets/notes-template.md') });
  await session.end();
});

test.concurrent('pinning: files changed under a running session are said once at the next turn; the session keeps what it loaded', async () => {
  const project = writeSkillsProject();
  copies.push(project.root);
  const m = lanes.open(project.root);
  m.enqueue(toolCalls([{ name: 'activate_skill', arguments: { name: 'lw-notes' }, id: 'call_activate' }]), text('⚓ Ready.'), text('⚓ Still here.'), text('⚓ And again.'));
  const session = await loopwright.start({ bundlePath: project.root, agentId: 'lw-agent-guide' });
  const first = await session.send('TP');
  expect(first.bundleChanges).toBeUndefined();
  const activation = results(await session.turnMessages(first)).call_activate!;
  expect((activation.skill as { hash?: string }).hash).toMatch(/^[0-9a-f]{16}$/);

  // The agent's customization and the active skill change on disk between turns, and a team
  // override of the agent appears.
  const customize = path.join(project.root, '.claude/skills/lw-agent-guide/customize.toml');
  fs.writeFileSync(customize, fs.readFileSync(customize, 'utf8').replace('Short and salty.', 'Long and sweet.'));
  fs.appendFileSync(path.join(project.root, '.claude/skills/lw-notes/SKILL.md'), '3. Sign the notes.\n');
  const second = await session.send('anything new?');
  expect(second.bundleChanges).toHaveLength(2);
  expect(second.bundleChanges![0]).toMatch(/^The agent lw-agent-guide changed on disk since this session started \(its files, customization or config; version [0-9a-f]{16}\)/);
  expect(second.bundleChanges![1]).toMatch(/^The skill lw-notes changed on disk since it was activated in this session/);
  const state = await session.state();
  expect(state.bundleChanges).toEqual(second.bundleChanges);
  expect(state.warnings).toEqual(expect.arrayContaining(second.bundleChanges!));
  // The session keeps the agent it started with: the system prompt is the one recorded.
  expect(String(m.requests[m.requests.length - 1]!.body!.messages![0]!.content)).toContain('Short and salty.');

  // Said once: the same versions are not reported again.
  const third = await session.send('and now?');
  expect(third.bundleChanges).toBeUndefined();
  await session.end();
});

if (corpusPresent('bmad-skills', [V611, V604])) {
  test.concurrent.each([V604, 'installed/v6.8.0-claude-code', V611])(
    '%s: every agent runs a one-shot session whose first request carries its persona, its menu and, with skills, the catalog',
    async (part) => {
      const root = path.join(CORPUS, part);
      // A lane on the install's folder (no other test runs there).
      const m = lanes.open(root);
      const skillsEra = !part.includes('v6.0.');
      const listing = await listProject(root);
      expect(listing.agents.length).toBeGreaterThanOrEqual(5);
      m.setResponder(() => text('Hello.'));
      for (const agent of listing.agents) {
        const before = m.requests.length;
        // The corpus is read only: a one-shot turn that only answers writes nothing.
        const session = await loopwright.start({ bundlePath: root, agentId: agent.id, firstMessage: 'hello', oneShot: true });
        const result = await session.result();
        expect({ agent: agent.id, status: result.lastTurn?.status }).toEqual({ agent: agent.id, status: 'completed' });
        const first = m.requests[before]!.body!;
        const system = String(first.messages![0]!.content);
        expect(system).toContain(`You are ${agent.name}`);
        expect(system).toContain(skillsEra ? 'MENU (numbered' : 'AVAILABLE COMMANDS:');
        const names = first.tools!.map((t) => t.function.name);
        if (skillsEra) {
          expect(system).toMatch(/^1\. \[\S+\] .+ → (skill|prompt)/m);
          expect(system).toContain('<available_skills>');
          expect(names).toContain('activate_skill');
        } else {
          expect(system).toMatch(/^\S.* - \[\w+\] /m);
          expect(names).not.toContain('activate_skill');
        }
      }
    },
  );

  test.concurrent('bmad 6.11: John activates a skill, reads its reference by a bare path and saves the PRD in planning artifacts', async () => {
    const project = copyInstall(V611);
    copies.push(project);
    const m = lanes.open(project);
    m.enqueue(
      toolCalls([{ name: 'activate_skill', arguments: { name: 'bmad-prd' }, id: 'call_activate' }]),
      toolCalls([{ name: 'read_file', arguments: { file_path: 'references/headless.md' }, id: 'call_ref' }]),
      toolCalls([{ name: 'save_output', arguments: { file_path: '{planning_artifacts}/prds/prd.md', content: '---\nstatus: draft\n---\n# PRD\n' }, id: 'call_save' }]),
      text('📋 Saved the draft PRD.'),
    );
    const session = await loopwright.start({ bundlePath: project, agentId: 'bmad-agent-pm' });
    const turn = await session.send('Hey John, let us write the PRD');
    expect(turn).toMatchObject({ success: true, status: 'completed', response: '📋 Saved the draft PRD.' });

    // The first request: John's persona, his menu from [[agent.menu]], the catalog, the tool.
    const first = m.requests[0]!.body!;
    const system = first.messages![0]!.content as string;
    expect(system).toContain('You are John, Product Manager.');
    expect(system).toContain('Thinks like Marty Cagan and Teresa Torres');
    expect(system).toMatch(/1\. \[PRD\] Create, update, or validate a PRD.* → skill bmad-prd/);
    expect(system).toContain('<skill><name>bmad-create-prd</name>');
    expect(system).toContain('"icon": "📋"');
    expect(first.tools!.map((t) => t.function.name)).toContain('activate_skill');
    // The central config, resolved for module bmm, instead of config.yaml.
    expect(first.messages!.some((m) => m.role === 'system' && String(m.content).includes(`planning_artifacts: ${project}/_bmad-output/planning-artifacts`))).toBe(true);

    const messages = await session.turnMessages(turn);
    const byId = results(messages);
    expect(byId.call_activate).toMatchObject({ success: true, skill: { name: 'bmad-prd', dir: path.join(project, '.claude/skills/bmad-prd') } });
    const instructions = String(byId.call_activate!.content);
    expect(instructions).toContain('<skill_content name="bmad-prd">');
    expect(instructions).toContain('Skill directory: {project-root}/.claude/skills/bmad-prd');
    expect(instructions).toContain('<file>references/headless.md</file>');
    // {workflow.*} scalars of the resolved customization are filled in.
    expect(instructions).toContain('Treat `assets/prd-template.md` as expert prior knowledge');
    // The bare path resolved from the active skill's folder.
    expect(byId.call_ref).toMatchObject({ success: true, path: path.join(project, '.claude/skills/bmad-prd/references/headless.md') });
    const saved = path.join(project, '_bmad-output/planning-artifacts/prds/prd.md');
    expect(byId.call_save).toMatchObject({ success: true, path: saved });
    expect(fs.readFileSync(saved, 'utf8')).toBe('---\nstatus: draft\n---\n# PRD\n');

    // The active skill outlives the turn: a bare path in the next turn still resolves from it.
    m.enqueue(toolCalls([{ name: 'read_file', arguments: { file_path: 'assets/prd-template.md' }, id: 'call_asset' }]), text('Read the template.'));
    const next = await session.send('Show me the template');
    expect(results(await session.turnMessages(next)).call_asset).toMatchObject({ success: true, path: path.join(project, '.claude/skills/bmad-prd/assets/prd-template.md') });
    await session.end();
  });

  test.concurrent('bmad 6.11: an unknown skill is a result naming the skills there are; a skill file cannot be written', async () => {
    const project = copyInstall(V611);
    copies.push(project);
    const m = lanes.open(project);
    m.enqueue(
      toolCalls([{ name: 'activate_skill', arguments: { name: 'bmad-nope' }, id: 'call_unknown' }]),
      toolCalls([{ name: 'save_output', arguments: { file_path: '{project-root}/.claude/skills/bmad-prd/SKILL.md', content: 'hijacked' }, id: 'call_write' }]),
      text('Done.'),
    );
    const session = await loopwright.start({ bundlePath: project, agentId: 'pm', allowTools: ['*'] });
    const turn = await session.send('go');
    const byId = results(await session.turnMessages(turn));
    expect(byId.call_unknown).toMatchObject({ success: false });
    expect(String(byId.call_unknown!.error)).toMatch(/No skill named bmad-nope; the skills are: .*bmad-prd/);
    expect(byId.call_write).toMatchObject({ success: false });
    expect(fs.readFileSync(path.join(project, '.claude/skills/bmad-prd/SKILL.md'), 'utf8')).not.toBe('hijacked');
    await session.end();
  });

  test.concurrent('bmad 6.0.4: the compiled pm runs a step-file workflow and saves where planning_artifacts says', async () => {
    const project = copyInstall(V604);
    copies.push(project);
    const m = lanes.open(project);
    m.enqueue(
      toolCalls([{ name: 'read_file', arguments: { file_path: '{project-root}/_bmad/bmm/workflows/2-plan-workflows/create-prd/workflow-create-prd.md' }, id: 'call_wf' }]),
      toolCalls([{ name: 'read_file', arguments: { file_path: '{project-root}/_bmad/bmm/workflows/2-plan-workflows/create-prd/steps-c/step-01-init.md' }, id: 'call_step' }]),
      toolCalls([{ name: 'save_output', arguments: { file_path: '{planning_artifacts}/prd.md', content: '---\nstepsCompleted: []\n---\n' }, id: 'call_save' }]),
      text('Started your PRD.'),
    );
    const session = await loopwright.start({ bundlePath: project, agentId: 'pm' });
    const turn = await session.send('CP');
    expect(turn.success).toBe(true);
    const system = m.requests[0]!.body!.messages![0]!.content as string;
    expect(system).toContain('You are John, Product Manager.');
    expect(system).toContain('Exec: {project-root}/_bmad/bmm/workflows/2-plan-workflows/create-prd/workflow-create-prd.md');
    const byId = results(await session.turnMessages(turn));
    expect(byId.call_wf).toMatchObject({ success: true });
    // The step file's own variables, resolved from where it lies (and from the config).
    const steps = path.join(project, '_bmad/bmm/workflows/2-plan-workflows/create-prd/steps-c');
    expect(byId.call_step).toMatchObject({
      success: true,
      frontMatterPaths: {
        nextStepFile: path.join(steps, 'step-02-discovery.md'),
        continueStepFile: path.join(steps, 'step-01b-continue.md'),
        outputFile: path.join(project, '_bmad-output/planning-artifacts/prd.md'),
        prdTemplate: path.join(steps, '../templates/prd-template.md'),
      },
    });
    // The install leaves output_folder out of its config; BMAD's default fills it.
    expect(byId.call_save).toMatchObject({ success: true, path: path.join(project, '_bmad-output/planning-artifacts/prd.md') });
    await session.end();
  });
}

// After the side-by-side tests (they have finished when these start): the compaction test sets the fake's context window, a
// setting of the whole server, and the built-in assistant's requests name no folder a lane could route them by.
describe('alone on the fake model', () => {
  beforeEach(() => h.fake.reset());

  test('a folder of skills without an agent runs the built-in assistant with the catalog', async () => {
    const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'lw-only-skills-')));
    copies.push(root);
    fs.mkdirSync(path.join(root, '.agents/skills/release-notes/references'), { recursive: true });
    fs.writeFileSync(
      path.join(root, '.agents/skills/release-notes/SKILL.md'),
      '---\nname: release-notes\ndescription: Write release notes. Use when: the user asks for a changelog.\n---\nRead `references/style.md` first.\n',
    );
    fs.writeFileSync(path.join(root, '.agents/skills/release-notes/references/style.md'), 'Past tense.\n');
    h.fake.enqueue(
      toolCalls([{ name: 'activate_skill', arguments: { name: 'release-notes' }, id: 'call_activate' }]),
      toolCalls([{ name: 'read_file', arguments: { file_path: 'references/style.md' }, id: 'call_style' }]),
      toolCalls([{ name: 'save_output', arguments: { file_path: 'notes.md', content: '- Fixed the pier.\n' }, id: 'call_save' }]),
      text('Written.'),
    );
    const session = await loopwright.start({ bundlePath: root, agentId: '' });
    const turn = await session.send('release notes for: fixed the pier');
    expect(turn.success).toBe(true);
    const system = String(h.fake.requests[0]!.body!.messages![0]!.content);
    expect(system).toContain('<skill><name>release-notes</name><description>Write release notes. Use when: the user asks for a changelog.</description></skill>');
    const byId = results(await session.turnMessages(turn));
    expect(byId.call_style).toMatchObject({ success: true, content: 'Past tense.\n' });
    expect(byId.call_save).toMatchObject({ success: true, path: path.join(root, 'output/notes.md') });
    await session.end();
  });

  test("compaction: a skill's instructions stay in the view, whole when pruning reaches them and in the summary when it replaces them", async () => {
    const project = writeSkillsProject();
    copies.push(project.root);
    fs.mkdirSync(path.join(project.root, 'notes'));
    fs.writeFileSync(path.join(project.root, 'notes/log.md'), 'The boat left the pier and came back before dusk.\n'.repeat(120));
    h.fake.setLimits({ contextWindow: 6144 });
    h.fake.setResponder((request: RecordedRequest): Step => {
      if (isSummaryRequest(request)) return text('Summary: the user had the log read several times.');
      const messages = (request.body?.messages ?? []) as ChatMessage[];
      const last = messages[messages.length - 1]!;
      const user = String([...messages].reverse().find((m) => m.role === 'user')?.content ?? '');
      if (last.role !== 'user') return text('Noted.');
      if (user === 'activate') return toolCalls([{ name: 'activate_skill', arguments: { name: 'lw-notes' } }]);
      return toolCalls([{ name: 'read_file', arguments: { file_path: '{project-root}/notes/log.md' } }]);
    });
    try {
      const session = await loopwright.start({ bundlePath: project.root, agentId: 'lw-agent-guide', context: { window: 6144, keepRecent: 1 } });
      expect((await session.send('activate')).success).toBe(true);
      const sent = (): ChatMessage[] => {
        const calls = h.fake.requests.filter((r) => !isSummaryRequest(r));
        return calls[calls.length - 1]!.body!.messages as ChatMessage[];
      };
      const instructionsIn = (messages: ChatMessage[]): 'whole' | 'summary' | 'lost' => {
        if (messages.some((m) => m.role === 'tool' && String(m.content).includes('1. Read `references/tides.md`.'))) return 'whole';
        if (
          messages.some(
            (m) =>
              m.role === 'user' &&
              String(m.content).includes('[Loopwright] Summary') &&
              String(m.content).includes(SKILL_INSTRUCTIONS_NOTE) &&
              String(m.content).includes('1. Read `references/tides.md`.'),
          )
        )
          return 'summary';
        return 'lost';
      };
      const seen = new Set<string>();
      for (let turn = 1; turn <= 8; turn++) {
        expect((await session.send(`read the log (${turn})`)).success).toBe(true);
        const messages = sent();
        const where = instructionsIn(messages);
        expect({ turn, where }).not.toEqual({ turn, where: 'lost' });
        seen.add(where);
        // Pruned reads are stubs: compaction really happened around the kept instructions.
        if (messages.some((m) => m.role === 'tool' && String(m.content).includes('"pruned":true'))) seen.add('pruned');
      }
      expect(seen).toEqual(new Set(['whole', 'summary', 'pruned']));
      await session.end();
    } finally {
      h.fake.setLimits({});
      h.fake.setResponder(undefined);
    }
  });
});
