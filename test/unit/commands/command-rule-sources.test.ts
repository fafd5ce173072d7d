/**
 * Where a session's command rules come from, below the workflow: initialisation records the
 * session's rules, then the bundle's (`commands.deny` in bundle.yaml a deny rule, `commands.allow`
 * a request) and an agent skill's `allowed-tools` (requests); an activated skill's `allowed-tools`
 * travel with its activation into the active skills, and the approval of a command they cover names
 * them; the command tool refuses a denied command itself, and a worker's deny rules refuse it
 * whoever initialised the session. Nothing here runs a command.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { initializeAgent } from '../../../bundle/initialize-agent';
import { activateSkillTool } from '../../../activities/tools/activate-skill';
import { refusingDenied, runCommandTool } from '../../../activities/tools/run-command';
import type { CommandSettings, RuntimeContext } from '../../../common/runtime-context';
import type { ToolCall } from '../../../common/messages';
import { withActivatedSkills } from '../../../workflows/turn/active-skills';
import { commandApprovalView, commandVerdict } from '../../../workflows/turn/command-approval';
import { copyExampleBundle } from '../../support/session-harness';
import { writeSkillsProject } from '../../support/skills-project';

const COMMANDS: CommandSettings = { network: false, allowUnsandboxed: false, timeoutMs: 120_000 };

function commandCall(command: string, cwd?: string): ToolCall {
  return { id: 'call_1', type: 'function', function: { name: 'run_command', arguments: JSON.stringify({ command, ...(cwd !== undefined ? { cwd } : {}) }) } };
}

/** Adds `allowed-tools` to the front matter of a skill of the project. */
function allowTools(root: string, skill: string, tools: string): void {
  const file = path.join(root, '.claude/skills', skill, 'SKILL.md');
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/^---\n/, `---\nallowed-tools: ${tools}\n`));
}

test("initialisation: the session's rules, then the bundle's deny rules and, as requests, its allow rules; none without commands", async () => {
  const copy = copyExampleBundle('lw-rule-sources-');
  try {
    fs.appendFileSync(path.join(copy.bundle, 'bundle.yaml'), 'commands:\n  allow: ["make test"]\n  deny: ["git push", "curl"]\n');
    const session = { allow: [{ pattern: 'git status', source: "the session's commands.allow" }] };
    const started = await initializeAgent({ bundlePath: copy.bundle, agentId: 'facilitator', commands: { ...COMMANDS, rules: session } });
    expect(started.context.commands).toEqual({
      ...COMMANDS,
      rules: {
        allow: [{ pattern: 'git status', source: "the session's commands.allow" }],
        deny: [
          { pattern: 'git push', source: "the bundle's commands.deny in bundle.yaml" },
          { pattern: 'curl', source: "the bundle's commands.deny in bundle.yaml" },
        ],
        requests: [{ pattern: 'make test', source: "the bundle's commands.allow in bundle.yaml" }],
      },
    });
    expect((await initializeAgent({ bundlePath: copy.bundle, agentId: 'facilitator' })).context.commands).toBeUndefined();
  } finally {
    copy.cleanup();
  }
});

test("an agent skill's allowed-tools are requests from initialisation; an activated skill's travel with its activation and the approval names them", async () => {
  const project = writeSkillsProject();
  try {
    allowTools(project.root, 'lw-agent-guide', 'Bash(git:*) Read');
    allowTools(project.root, 'lw-notes', 'Bash(uv run {skill-root}/scripts/*) Bash(jq:*) Write');
    const started = await initializeAgent({ bundlePath: project.root, agentId: 'lw-agent-guide', commands: COMMANDS });
    expect(started.context.commands?.rules).toEqual({ requests: [{ pattern: 'git', source: "skill lw-agent-guide's allowed-tools" }] });

    const activated = await activateSkillTool(started.context, { name: 'lw-notes' });
    // {skill-root} is filled in as the skill's instructions fill it.
    expect(activated).toMatchObject({ success: true, skill: { name: 'lw-notes', commands: ['uv run {project-root}/.claude/skills/lw-notes/scripts/*', 'jq'] } });
    const call: ToolCall = { id: 'call_a', type: 'function', function: { name: 'activate_skill', arguments: '{"name":"lw-notes"}' } };
    const context = withActivatedSkills(started.context, [call], [activated]);
    expect(context.activeSkills?.[0]).toMatchObject({ name: 'lw-notes', commands: ['uv run {project-root}/.claude/skills/lw-notes/scripts/*', 'jq'] });
    expect(commandVerdict(commandCall(`uv run ${project.root}/.claude/skills/lw-notes/scripts/plan.py`), context)).toMatchObject({
      verdict: 'ask',
      requestedBy: [{ source: "skill lw-notes's allowed-tools" }],
    });

    const jq = commandCall("jq -r '.name' {project-root}/docs/trip.json", 'docs');
    const verdict = commandVerdict(jq, context);
    expect(verdict).toEqual({ verdict: 'ask', requestedBy: [{ pattern: 'jq', source: "skill lw-notes's allowed-tools" }] });
    const out = path.join(project.root, 'out');
    expect(commandApprovalView(jq, context, verdict)).toEqual({
      line: `jq -r '.name' ${project.root}/docs/trip.json`,
      cwd: path.join(project.root, 'docs'),
      sandbox: `bubblewrap: project read-only, writable ${out}; network off; ends after 120 s`,
      requestedBy: [`"jq" (skill lw-notes's allowed-tools)`],
    });
    // A request is never a grant, and a command no request covers names none.
    expect(commandVerdict(commandCall('git status && make'), context)).toEqual({ verdict: 'ask', requestedBy: [] });
    expect(commandVerdict(commandCall('git log'), context)).toMatchObject({ verdict: 'ask', requestedBy: [{ source: "skill lw-agent-guide's allowed-tools" }] });
  } finally {
    project.cleanup();
  }
});

test('the approval view: variables filled in, the folder resolved, unsandboxed and network settings said, and why the rules cannot judge a line', () => {
  const context: RuntimeContext = {
    bundleRoot: '/p',
    coreRoot: '/p',
    projectRoot: '/p',
    variables: { 'project-root': '/p', output_folder: '/p/my docs' },
    readRoots: ['/p'],
    writeRoots: ['/p/my docs'],
    maxReadBytes: 1000,
    commands: { network: true, allowUnsandboxed: true, timeoutMs: 30_000, rules: { allow: [{ pattern: 'ls', source: 's' }] } },
  };
  const call = commandCall('ls {output_folder} > {output_folder}/list.txt', '{output_folder}/../src/./lib');
  expect(commandApprovalView(call, context, commandVerdict(call, context))).toEqual({
    line: "ls '/p/my docs' > '/p/my docs'/list.txt",
    cwd: '/p/src/lib',
    sandbox: 'bubblewrap: project read-only, writable /p/my docs (where bubblewrap is missing: no sandbox, allowUnsandboxed); network on; ends after 30 s',
    unjudged: 'the line has a redirection to a file, which no allow rule covers',
  });
  expect(commandVerdict(commandCall('ls -a'), context)).toMatchObject({ verdict: 'allow' });
  // Not a command, or a session without rules: the rules say nothing.
  expect(commandVerdict({ ...call, function: { name: 'read_file', arguments: '{}' } }, context)).toBeUndefined();
  expect(commandVerdict(call, { ...context, commands: COMMANDS })).toBeUndefined();
});

describe('the command tool refuses a denied command itself', () => {
  let root: string;
  let ctx: RuntimeContext;
  beforeAll(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'lw-denied-')));
    ctx = {
      bundleRoot: root,
      coreRoot: root,
      projectRoot: root,
      variables: { 'project-root': root },
      readRoots: [root],
      writeRoots: [path.join(root, 'out')],
      maxReadBytes: 1000,
      commands: { ...COMMANDS, rules: { deny: [{ pattern: 'touch', source: "the session's commands.deny" }] } },
    };
  });
  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  test('a rule of the session (recorded at initialisation): nothing runs, not even the write roots are made', async () => {
    await expect(runCommandTool(ctx, { command: 'echo a; touch {project-root}/x' })).resolves.toEqual({
      success: false,
      refused: true,
      command: `echo a; touch ${root}/x`,
      error: `Refused without asking: ${JSON.stringify(`touch ${root}/x`)} is covered by the deny rule "touch" (the session's commands.deny). The command did not run.`,
    });
    expect(fs.existsSync(path.join(root, 'out'))).toBe(false);
  });

  test("a worker's deny rules, whoever initialised the session; other commands go on to the tool", async () => {
    const ran: unknown[] = [];
    const activity = refusingDenied({ deny: [{ pattern: 'git push', source: "this worker's --deny-command" }] }, async (_ctx, args) => {
      ran.push(args);
      return { success: true };
    });
    const { commands: _c, ...withoutRules } = ctx;
    const session = { ...withoutRules, commands: COMMANDS };
    await expect(activity(session, { command: 'git push --force' })).resolves.toMatchObject({ refused: true, error: expect.stringContaining(`"git push" (this worker's --deny-command)`) });
    await expect(activity(session, { command: 'git status' })).resolves.toEqual({ success: true });
    expect(ran).toEqual([{ command: 'git status' }]);
  });
});
