/**
 * The `*.agent.yaml` compiler (bundle/agent-yaml.ts): the installer's rules, its templates when the
 * source tree has them (written here in temp folders, in the installer's format), Loopwright's own
 * wording when it has not, and the errors (file, field path, line).
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parseAgentFile, readAgentFile } from '../../../bundle/agent-file';
import { compileAgentYaml, fieldName } from '../../../bundle/agent-yaml';
import { findInstallerModels } from '../../../bundle/agent-yaml-models';
import { AgentParseError, LimitExceededError } from '../../../bundle/errors';
import { buildSystemPrompt } from '../../../bundle/system-prompt';
import { makeTempDir, writeTree } from './fixtures';

const AGENT = `# a comment
agent:
  metadata:
    id: demo/agents/ana.md
    name: Ana
    title: Analyst
    icon: "🔎"
    module: demo
  persona:
    role: Research lead
    identity: |
      Ten years of field work.
      Careful with sources.
    communication_style: Calm.
    principles:
      - First principle.
      - Second principle.
  critical_actions:
    - "Load into memory {project-root}/notes.md"
    - Remember the goal
  menu:
    - trigger: research
      workflow: "{project-root}/wf/research/workflow.yaml"
      description: Run research
    - trigger: "*check"
      validate-workflow: "{project-root}/wf/research/workflow.yaml"
      checklist: "{project-root}/wf/research/checklist.md"
      document: "{output_folder}/research.md"
      description: Check the research
    - trigger: summary
      data: "{project-root}/data/facts.csv"
      exec: "{project-root}/tasks/summary.md"
      description: Summarise
    - trigger: brainstorm
      action: "#ideas"
      description: Brainstorm
    - trigger: outline
      tmpl: "{project-root}/templates/outline.md"
      action: Write an outline
    - trigger: note
      description: Just a note item
  prompts:
    - id: ideas
      content: |
        List ten ideas.
        Rank them.
`;

/** The installer's template files, in its format (placeholders and XML), with made-up wording. */
const MODELS: Record<string, string> = {
  'utility/models/fragments/activation-steps.xml': `<step n="1">Persona step</step>
<step n="2">Load {project-root}/bmad/{{module}}/config.yaml
    and keep its fields</step>
{AGENT_SPECIFIC_STEPS}
<step n="{MENU_STEP}">Menu step</step>
<step n="{HALT_STEP}">Halt &amp; wait</step>`,
  'utility/models/fragments/activation-rules.xml': '<rules>\n  - Rule one\n  - Rule two\n</rules>\n',
  'utility/models/fragments/handler-workflow.xml': '<handler type="workflow">\n  Workflow handler\n  second line\n</handler>',
  'utility/models/fragments/handler-exec.xml': '    <handler type="exec">\n      Exec handler\n    </handler>\n',
};

let tmp: string;
beforeEach(async () => {
  tmp = await makeTempDir('lw-agent-yaml-');
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

function compileError(text: string, file = 'src/modules/demo/agents/ana.agent.yaml'): AgentParseError {
  try {
    compileAgentYaml(text, file);
  } catch (error) {
    expect(error).toBeInstanceOf(AgentParseError);
    return error as AgentParseError;
  }
  throw new Error('expected an AgentParseError');
}

describe('agent-yaml', () => {
  test('metadata, persona (principles joined), prompts and the dialect', () => {
    const agent = compileAgentYaml(AGENT, 'src/modules/demo/agents/ana.agent.yaml');
    expect(agent).toMatchObject({ id: 'demo/agents/ana.md', name: 'Ana', title: 'Analyst', icon: '🔎', dialect: 'yaml' });
    expect(agent.file).toBe('src/modules/demo/agents/ana.agent.yaml');
    expect(agent.persona).toEqual({
      role: 'Research lead',
      identity: 'Ten years of field work.\nCareful with sources.',
      communication_style: 'Calm.',
      principles: 'First principle. Second principle.',
    });
    expect(agent.prompts).toEqual([{ id: 'ideas', text: 'List ten ideas.\nRank them.' }]);
  });

  test('menu: help first, exit last, * added once, targets of every kind in priority order, checklist and document kept', () => {
    const agent = compileAgentYaml(AGENT, 'ana.agent.yaml');
    expect(agent.commands.map((c) => c.cmd)).toEqual(['*help', '*research', '*check', '*summary', '*brainstorm', '*outline', '*note', '*exit']);
    expect(agent.commands[0]).toEqual({ cmd: '*help', description: 'Show numbered menu', targets: [] });
    expect(agent.commands[7]).toEqual({ cmd: '*exit', description: 'Exit with confirmation', targets: [] });
    expect(agent.commands[2]).toEqual({
      cmd: '*check',
      description: 'Check the research',
      target: { kind: 'validate-workflow', value: '{project-root}/wf/research/workflow.yaml' },
      targets: [{ kind: 'validate-workflow', value: '{project-root}/wf/research/workflow.yaml' }],
      checklist: '{project-root}/wf/research/checklist.md',
      document: '{output_folder}/research.md',
    });
    // data was written first, but exec is the primary target (the XML parser's order)
    expect(agent.commands[3].targets.map((t) => t.kind)).toEqual(['exec', 'data']);
    expect(agent.commands[3].target?.kind).toBe('exec');
    expect(agent.commands[4].targets).toEqual([{ kind: 'action', value: '#ideas' }]);
    expect(agent.commands[5]).toMatchObject({ description: '', targets: [{ kind: 'action' }, { kind: 'tmpl' }] });
    expect(agent.commands[6]).toEqual({ cmd: '*note', description: 'Just a note item', targets: [] });
  });

  test('a menu that has help or exit already gets none added; an empty menu gets both', () => {
    const own = compileAgentYaml('agent:\n  metadata: {name: A, title: T}\n  menu:\n    - trigger: exit\n      description: Leave\n    - trigger: "*help"\n      description: Menu\n', 'a.agent.yaml');
    expect(own.commands.map((c) => [c.cmd, c.description])).toEqual([
      ['*exit', 'Leave'],
      ['*help', 'Menu'],
    ]);
    const empty = compileAgentYaml('agent:\n  metadata: {name: A, title: T}\n  menu: []\n', 'a.agent.yaml');
    expect(empty.commands.map((c) => c.cmd)).toEqual(['*help', '*exit']);
  });

  test('without metadata.id the id is the file name without .agent.yaml; variables stay as written', () => {
    const agent = compileAgentYaml('agent:\n  metadata: {name: A, title: T}\n  critical_actions: ["Use {user_name} and {config_source}:x"]\n', '/x/my-agent.agent.yml');
    expect(agent.id).toBe('my-agent');
    expect(agent.criticalActions).toContain('Use {user_name} and {config_source}:x');
    expect(agent.icon).toBeUndefined();
  });

  test("without the installer's templates: Loopwright's own steps around the agent's actions, handlers per kind used, rules", () => {
    const agent = compileAgentYaml(AGENT, 'ana.agent.yaml');
    const steps = agent.criticalActions;
    expect(steps).toHaveLength(3 + 2 + 4);
    expect(steps[1]).toMatch(/^Load \{config_source\} before anything else\./);
    expect(steps.slice(3, 5)).toEqual(['Load into memory {project-root}/notes.md', 'Remember the goal']);
    expect(steps[5]).toMatch(/numbered list/);
    // first use order over the menu, keys in the order written
    expect(agent.menuHandlers.map((h) => h.type)).toEqual(['workflow', 'validate-workflow', 'data', 'exec', 'action', 'tmpl']);
    for (const handler of agent.menuHandlers) expect(handler.text).toMatch(new RegExp(`${handler.type}=`));
    expect(agent.rules.length).toBeGreaterThan(3);
    expect(agent.rules.join('\n')).toMatch(/\{communication_language\}/);
  });

  test("with the installer's templates: placeholders filled, actions after the steps before the placeholder, missing handlers built in", async () => {
    await writeTree(tmp, { ...MODELS, 'modules/demo/agents/ana.agent.yaml': AGENT, 'core/agents/boss.agent.yaml': 'agent:\n  metadata: {name: B, title: Boss}\n' });
    const file = path.join(tmp, 'modules/demo/agents/ana.agent.yaml');
    const models = await findInstallerModels(file, tmp);
    expect(models?.folder).toBe(path.join(tmp, 'utility/models/fragments'));
    expect(models?.files).toHaveLength(4);
    const agent = parseAgentFile(AGENT, file, { models });
    expect(agent.criticalActions).toEqual([
      'Persona step',
      'Load {project-root}/bmad/demo/config.yaml\nand keep its fields',
      'Load into memory {project-root}/notes.md',
      'Remember the goal',
      'Menu step',
      'Halt & wait',
    ]);
    expect(agent.rules).toEqual(['Rule one', 'Rule two']);
    expect(agent.menuHandlers[0]).toEqual({ type: 'workflow', text: 'Workflow handler\nsecond line' });
    expect(agent.menuHandlers.find((h) => h.type === 'exec')).toEqual({ type: 'exec', text: 'Exec handler' });
    // no handler-data.xml: Loopwright's own
    expect(agent.menuHandlers.find((h) => h.type === 'data')?.text).toMatch(/^An item with data=/);

    // {{module}} without metadata.module: the module folder's name
    const boss = await readAgentFile(path.join(tmp, 'core/agents/boss.agent.yaml'), tmp);
    expect(boss.agent.criticalActions[1]).toBe('Load {project-root}/bmad/core/config.yaml\nand keep its fields');
    expect(boss.files).toEqual([path.join(tmp, 'core/agents/boss.agent.yaml'), ...(models?.files ?? [])]);
  });

  test('templates are looked for only inside the root given, and the system prompt carries them', async () => {
    await writeTree(tmp, { ...MODELS, 'tree/modules/demo/agents/ana.agent.yaml': AGENT });
    const file = path.join(tmp, 'tree/modules/demo/agents/ana.agent.yaml');
    expect(await findInstallerModels(file, path.join(tmp, 'tree'))).toBeUndefined();
    const outside = await readAgentFile(file, path.join(tmp, 'tree'));
    expect(outside.files).toEqual([file]);
    const inside = await readAgentFile(file, tmp);
    expect(buildSystemPrompt(inside.agent)).toContain('Rule one');
    expect(buildSystemPrompt(outside.agent)).not.toContain('Rule one');
  });

  test('a template symlinked out of the root is refused; a malformed one names its file', async () => {
    await writeTree(tmp, { 'outside/activation-steps.xml': '<step n="1">x</step>', 'tree/modules/demo/agents/ana.agent.yaml': AGENT });
    await fs.mkdir(path.join(tmp, 'tree/utility/models/fragments'), { recursive: true });
    await fs.symlink(path.join(tmp, 'outside/activation-steps.xml'), path.join(tmp, 'tree/utility/models/fragments/activation-steps.xml'));
    const file = path.join(tmp, 'tree/modules/demo/agents/ana.agent.yaml');
    await expect(readAgentFile(file, path.join(tmp, 'tree'))).rejects.toThrow(/Installer template .*activation-steps\.xml cannot be read/);
    await fs.rm(path.join(tmp, 'tree/utility/models/fragments/activation-steps.xml'));
    await writeTree(tmp, { 'tree/utility/models/fragments/activation-steps.xml': '<step n="1">never closed' });
    await expect(readAgentFile(file, path.join(tmp, 'tree'))).rejects.toThrow(/Invalid installer template .*activation-steps\.xml/);
  });

  test('the dispatcher picks the parser by file name', () => {
    expect(parseAgentFile(AGENT, 'a/ana.agent.yaml').dialect).toBe('yaml');
    expect(parseAgentFile(AGENT.replace('agent:', 'agent:'), 'a/ana.AGENT.YML').dialect).toBe('yaml');
    expect(() => parseAgentFile(AGENT, 'a/ana.md')).toThrow('missing <agent> element');
  });

  test.each([
    ['not a mapping', '- a\n- b\n', 'file', 'must be a mapping (got a list)', 1],
    ['an empty file', '', 'file', 'is empty', undefined],
    ['no agent', 'other: 1\n', 'agent', 'agent is missing', 1],
    ['no metadata', 'agent:\n  persona: {}\n', 'agent.metadata', 'agent.metadata is missing', 2],
    ['no name', 'agent:\n  metadata:\n    title: T\n', 'agent.metadata.name', 'agent.metadata.name is missing', 3],
    ['an empty title', 'agent:\n  metadata:\n    name: N\n    title: ""\n', 'agent.metadata.title', 'is missing', 4],
    ['a numeric name', 'agent:\n  metadata:\n    name: 7\n    title: T\n', 'agent.metadata.name', 'must be a text (got a number)', 3],
    ['a persona list', 'agent:\n  metadata: {name: N, title: T}\n  persona: [a]\n', 'agent.persona', 'must be a mapping (got a list)', 3],
    ['a principle mapping', 'agent:\n  metadata: {name: N, title: T}\n  persona:\n    principles:\n      - ok\n      - {a: 1}\n', 'agent.persona.principles[1]', 'must be a text', 6],
    ['critical actions as text', 'agent:\n  metadata: {name: N, title: T}\n  critical_actions: do it\n', 'agent.critical_actions', 'must be a list (got a string)', 3],
    ['a menu mapping', 'agent:\n  metadata: {name: N, title: T}\n  menu: {a: 1}\n', 'agent.menu', 'must be a list', 3],
    [
      'a menu item without trigger',
      'agent:\n  metadata: {name: N, title: T}\n  menu:\n    - trigger: a\n      description: A\n    - workflow: x.yaml\n      description: B\n',
      'agent.menu[1].trigger',
      'agent.menu[1].trigger is missing',
      6,
    ],
    ['a menu item with nothing', 'agent:\n  metadata: {name: N, title: T}\n  menu:\n    - trigger: a\n', 'agent.menu[0]', 'has no target', 4],
    ['a list as target', 'agent:\n  metadata: {name: N, title: T}\n  menu:\n    - trigger: a\n      exec: [x]\n', 'agent.menu[0].exec', 'must be a text (got a list)', 5],
    ['a numeric checklist', 'agent:\n  metadata: {name: N, title: T}\n  menu:\n    - trigger: a\n      description: d\n      checklist: 3\n', 'agent.menu[0].checklist', 'must be a text', 6],
    ['a prompt without id', 'agent:\n  metadata: {name: N, title: T}\n  prompts:\n    - content: x\n', 'agent.prompts[0].id', 'is missing', 4],
  ])('error: %s names the file, the field and the line', (_what, text, field, message, line) => {
    const error = compileError(text);
    expect(error.field).toBe(field);
    expect(error.file).toBe('src/modules/demo/agents/ana.agent.yaml');
    expect(error.message).toContain('src/modules/demo/agents/ana.agent.yaml');
    expect(error.message).toContain(message);
    expect(error.line).toBe(line);
    if (line !== undefined) expect(error.message).toContain(`(line ${line})`);
  });

  test('error: YAML that does not parse is an AgentParseError with its line', () => {
    const error = compileError('agent:\n  metadata:\n    name: [unclosed\n');
    expect(error.message).toMatch(/^Invalid agent file src\/modules\/demo\/agents\/ana\.agent\.yaml: invalid YAML: /);
    expect(error.line).toBeGreaterThan(0);
    const duplicate = compileError('agent:\n  metadata: {name: N, title: T}\n  menu: []\n  menu: []\n');
    expect(duplicate.message).toMatch(/Map keys must be unique at line 4/);
    expect(duplicate.line).toBe(4);
  });

  test('limits: those of agent files and of the YAML reader', () => {
    const long = `agent:\n  metadata: {name: N, title: T}\n  persona:\n    role: "${'x'.repeat(33 * 1024)}"\n`;
    expect(() => compileAgentYaml(long, 'a.agent.yaml')).toThrow(LimitExceededError);
    const many = `agent:\n  metadata: {name: N, title: T}\n  critical_actions:\n${'    - x\n'.repeat(101)}`;
    const error = (() => {
      try {
        return compileAgentYaml(many, 'a.agent.yaml');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(LimitExceededError);
    expect((error as LimitExceededError).limit).toBe('MAX_CRITICAL_ACTIONS');
    expect(() => compileAgentYaml('x'.repeat(300 * 1024), 'a.agent.yaml')).toThrow(/MAX_AGENT_CHARS/);
  });

  test('fieldName spells paths as agent.menu[3].trigger', () => {
    expect(fieldName(['agent', 'menu', 3, 'trigger'])).toBe('agent.menu[3].trigger');
    expect(fieldName([])).toBe('file');
  });
});
