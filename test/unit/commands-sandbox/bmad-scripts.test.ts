/**
 * The scripts BMAD 6.11 skills ship, run as the skills say, through the real `run_command` tool on
 * the real bwrap and uv: a copy of the real install (corpus), a session initialised on it with
 * commands on, and the exact command lines of the skills' SKILL.md with `{skill-root}` filled in as
 * the model reads them and `{project-root}`, `{output_folder}`, `{planning_artifacts}` as the tool
 * fills them. bmad-brainstorming resolves its customization (a team override in `_bmad/custom/`
 * included) and keeps its memlog under the output folder; bmad-ux keeps one under the planning
 * artifacts; a script with a third-party dependency fails offline naming it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RuntimeContext } from '../../../common/runtime-context';
import { initializeAgent } from '../../../bundle/initialize-agent';
import { fillSkillText } from '../../../bundle/skills/skill-agent';
import { runCommandTool } from '../../../activities/tools/run-command';
import { CORPUS, corpusPresent } from '../../support/corpus';
import { SANDBOX_UID } from './sandbox-fixture';
import { reachableUv, uvTestsSkipped } from './uv-fixture';

jest.setTimeout(60_000);

const V611 = 'installed/v6.11.0-claude-code';
const SUITE = 'BMAD 6.11 scripts in the command sandbox';
const IS_ROOT = process.getuid?.() === 0;

/** A writable copy of the install, owned by the sandbox's user (as a user's project would be). */
function copyInstall(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-bmad-scripts-'));
  fs.cpSync(path.join(CORPUS, V611), dir, { recursive: true });
  // A team override of the brainstorming skill, which resolve_customization.py merges in.
  fs.writeFileSync(path.join(dir, '_bmad', 'custom', 'bmad-brainstorming.toml'), '[workflow]\nfavorite_techniques = ["SCAMPER"]\n');
  for (const full of [dir, ...fs.readdirSync(dir, { recursive: true }).map((rel) => path.join(dir, String(rel)))]) {
    const isDir = fs.lstatSync(full).isDirectory();
    fs.chmodSync(full, isDir ? 0o755 : 0o644);
    if (IS_ROOT) fs.lchownSync(full, SANDBOX_UID, SANDBOX_UID);
  }
  return fs.realpathSync(dir);
}

/**
 * The first `uv run ...` command of a skill file (a code span, or a fenced block with its `\`
 * continuations joined) whose text contains `marker`, with `{skill-root}` filled in as the model
 * reads it.
 */
function skillCommand(project: string, skill: string, marker: string, file = 'SKILL.md'): string {
  const dir = path.join(project, '.claude', 'skills', skill);
  const text = fs.readFileSync(path.join(dir, file), 'utf8');
  const spans = [...text.matchAll(/`(uv run [^`]+)`/g)].map((m) => m[1]);
  const blocks = [...text.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)].map((m) => m[1].replace(/\\\n\s*/g, '').trim());
  const span = [...spans, ...blocks].find((line) => line.startsWith('uv run ') && line.includes(marker));
  if (span === undefined) throw new Error(`${skill}/${file} has no \`uv run\` line with ${marker}`);
  return fillSkillText(span, { name: skill, dir }, project, {});
}

/** The line with the model's own placeholders (`<topic>`, `{doc_workspace}`) filled in as a model would. */
function asTheModelWrites(line: string, values: Record<string, string>): string {
  let out = line;
  for (const [placeholder, value] of Object.entries(values)) out = out.split(placeholder).join(value);
  return out;
}

if (corpusPresent(SUITE, [`${V611}/_bmad/scripts/memlog.py`, `${V611}/_bmad/scripts/resolve_customization.py`]) && uvTestsSkipped(SUITE) === undefined) {
  let project: string;
  let ctx: RuntimeContext;
  let restoreUv: () => Promise<void>;

  beforeAll(async () => {
    restoreUv = await reachableUv();
    project = copyInstall();
    const initialized = await initializeAgent({ bundlePath: project, agentId: 'bmad-agent-analyst', commands: { network: false, allowUnsandboxed: false, timeoutMs: 30_000 } });
    ctx = initialized.context;
  });

  afterAll(async () => {
    await restoreUv?.();
    if (project !== undefined) fs.rmSync(project, { recursive: true, force: true });
  });

  const run = async (command: string) => {
    const result = await runCommandTool(ctx, { command });
    if (result.success !== true) throw new Error(`${command} failed: ${JSON.stringify(result, null, 2)}`);
    return result;
  };

  test('bmad-brainstorming: resolve_customization.py prints the merged workflow block as JSON, the team override included', async () => {
    const line = skillCommand(project, 'bmad-brainstorming', 'resolve_customization.py');
    expect(line).toBe('uv run {project-root}/_bmad/scripts/resolve_customization.py --skill {project-root}/.claude/skills/bmad-brainstorming --key workflow');
    const result = await run(line);
    expect(result).toMatchObject({ sandboxed: true, exitCode: 0, stderr: '' });
    expect(result.command).toBe(`uv run ${project}/_bmad/scripts/resolve_customization.py --skill ${project}/.claude/skills/bmad-brainstorming --key workflow`);
    expect(JSON.parse(String(result.stdout))).toEqual({
      workflow: expect.objectContaining({
        output_dir: '{output_folder}/brainstorming',
        output_folder_name: 'brainstorm-{topic_slug}-{date}',
        brain_methods: '{skill-root}/assets/brain-methods.csv',
        favorite_techniques: ['SCAMPER'],
      }),
    });
  });

  test('bmad-brainstorming: resolve_config.py merges the central config layers', async () => {
    const result = await run(skillCommand(project, 'bmad-brainstorming', 'resolve_config.py'));
    expect(JSON.parse(String(result.stdout))).toEqual({ core: expect.objectContaining({ user_name: 'Sam', output_folder: '_bmad-output', project_name: 'bmad-611' }) });
  });

  test('bmad-brainstorming: memlog.py init, append and set write the run folder under the output folder, as the file on disk shows', async () => {
    const model = {
      '{doc_workspace}': '{output_folder}/brainstorming/brainstorm-harbour-trips-2026-11-27',
      '<topic>': 'Harbour trips',
      '<goal>': 'Fill the boats in winter',
      '<facilitator|partner|autonomous>': 'partner',
      '<kind>': 'idea',
      '<one-line gist>': 'Sunset tours with hot cider',
    };
    const init = await run(asTheModelWrites(skillCommand(project, 'bmad-brainstorming', 'memlog.py init'), model));
    const relative = '_bmad-output/brainstorming/brainstorm-harbour-trips-2026-11-27/.memlog.md';
    expect(JSON.parse(String(init.stdout))).toEqual({ ok: true, memlog: relative, entries: 0 });
    const append = asTheModelWrites(skillCommand(project, 'bmad-brainstorming', 'memlog.py append'), model);
    expect(append).toBe(
      'uv run {project-root}/_bmad/scripts/memlog.py append --workspace {output_folder}/brainstorming/brainstorm-harbour-trips-2026-11-27 --type idea --text "Sunset tours with hot cider"',
    );
    expect(JSON.parse(String((await run(append)).stdout))).toEqual({ ok: true, memlog: relative, entries: 1 });
    expect(JSON.parse(String((await run(`${append.replace('Sunset tours with hot cider', 'Winter ferry to the seal colony')} --by user`)).stdout))).toMatchObject({ entries: 2 });
    await run(skillCommand(project, 'bmad-brainstorming', 'memlog.py set').replace('{doc_workspace}', model['{doc_workspace}']));

    const file = path.join(project, relative);
    expect(fs.readFileSync(file, 'utf8')).toMatch(
      /^---\ntopic: Harbour trips\ngoal: Fill the boats in winter\nmode: partner\nstatus: complete\nupdated: \d{4}-\d\d-\d\dT\d\d:\d\d\n---\n\n- \(idea\) Sunset tours with hot cider\n- \(idea by user\) Winter ferry to the seal colony\n$/,
    );
    // Written by the command's user, and nothing but the memlog (its temp file renamed over it).
    expect(fs.statSync(file).uid).toBe(SANDBOX_UID);
    expect(fs.readdirSync(path.dirname(file))).toEqual(['.memlog.md']);
  });

  test('bmad-ux: memlog.py init writes under the planning artifacts folder the config names', async () => {
    const line = asTheModelWrites(skillCommand(project, 'bmad-ux', 'memlog.py init'), {
      '{doc_workspace}': '{planning_artifacts}/ux-designs/ux-bmad-611-2026-11-27',
      '<product/UX>': 'Harbour booking app',
    });
    const result = await run(line);
    const file = path.join(project, '_bmad-output', 'planning-artifacts', 'ux-designs', 'ux-bmad-611-2026-11-27', '.memlog.md');
    expect(JSON.parse(String(result.stdout))).toEqual({ ok: true, memlog: file, entries: 0 });
    expect(fs.readFileSync(file, 'utf8')).toMatch(/^---\ntopic: Harbour booking app\nupdated: .+\n---\n\n\n$/);
  });

  test('a script with a third-party dependency fails offline with uv naming the package; the project stays as it was', async () => {
    const line = asTheModelWrites(skillCommand(project, 'bmad-sprint-planning', 'sprint_plan.py status', 'references/status-view.md'), { '{date}': '11-27-2026 15:00' });
    expect(line).toBe('uv run {project-root}/.claude/skills/bmad-sprint-planning/scripts/sprint_plan.py status --status-file {implementation_artifacts}/sprint-status.yaml --date "11-27-2026 15:00"');
    const result = await runCommandTool(ctx, { command: line });
    expect(result).toMatchObject({ success: false, exitCode: 1, sandboxed: true });
    expect(String(result.stderr)).toMatch(/ruamel-yaml was not found in the cache/);
    expect(String(result.stderr)).toMatch(/the network was disabled/);
    expect(fs.readdirSync(project).sort()).toEqual(['.claude', 'LICENSE', '_bmad', '_bmad-output']);
  });
}
