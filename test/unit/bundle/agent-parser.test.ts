import { parseAgent, tidy } from '../../../bundle/agent-parser';
import { AgentParseError } from '../../../bundle/errors';
import { decodeEntities, readElement, XmlSyntaxError } from '../../../bundle/xml-reader';

const SOURCE_AGENT = `<!-- a comment before -->

# Alex

\`\`\`xml
<agent id="bundle/agents/alex.md" name="Alex" title="Requirements Facilitator" icon="🧭">
  <persona>
    <role>Requirements facilitator</role>
    <identity>Helps teams say what they need &amp; why.</identity>
    <communication_style>Warm, one question at a time</communication_style>
    <principles>
      <p>Listen first</p>
      <p>Write it down</p>
    </principles>
  </persona>
  <critical-actions>
    <i>Load into memory {bundle-root}/config.yaml and set variables: project_name, output_folder, user_name</i>
    <i>Remember the user's name is {user_name}</i>
    <i>ALWAYS communicate in {communication_language}</i>
  </critical-actions>
  <!-- commands follow -->
  <cmds>
    <c cmd="*help">Show the command list</c>
    <c cmd="*intake" run-workflow="{bundle-root}/workflows/intake/workflow.yaml">Run the intake</c>
    <c cmd="*check" validate-workflow="{bundle-root}/workflows/intake/workflow.yaml">Check a document</c>
    <c cmd="*task" exec="{bundle-root}/tasks/t.md">Run a task</c>
    <c cmd="*say" action="#greet">Say hello</c>
    <c cmd="*retro" run-workflow="{bundle-root}/workflows/retro.md" data="{bundle-root}/data/team.csv">Retro</c>
    <c cmd="*exit">Leave</c>
  </cmds>
  <prompts>
    <prompt id="greet"><![CDATA[
      Say hello to <user> & smile.
        Indented line
    ]]></prompt>
  </prompts>
</agent>
\`\`\`
`;

const COMPILED_AGENT = `---
name: 'dev'
description: 'Developer'
---

You are this agent.

\`\`\`xml
<agent id="x/dev.md" name="Amelia" title="Developer Agent" icon="💻">
<activation critical="MANDATORY">
  <step n="1">Load persona from this current agent file (already in context)</step>
  <step n="2">IMMEDIATE ACTION:
      - Load and read {project-root}/bmad/bmm/config.yaml NOW
      - Store ALL fields as session variables</step>
  <step n="3">Remember: user's name is {user_name}</step>
  <menu-handlers>
    <handlers>
      <handler type="workflow">
        When menu item has: workflow="path/to/workflow.yaml"
        1. Load the engine
      </handler>
    </handlers>
  </menu-handlers>
  <rules>
    - ALWAYS communicate in {communication_language}
    - Stay in character
  </rules>
</activation>
  <persona>
    <role>Engineer</role>
    <identity>Builds things</identity>
    <communication_style>Succinct</communication_style>
    <principles>Tests first, it&apos;s &quot;simple&quot;.</principles>
  </persona>
  <menu>
    <item cmd="*help">Show numbered menu</item>
    <item cmd="*develop" workflow="{project-root}/bmad/bmm/workflows/dev/workflow.yaml">Develop</item>
    <item cmd="*validate" validate-workflow="{project-root}/bmad/bmm/workflows/dev/workflow.yaml">Validate</item>
    <item cmd="*tmpl" tmpl="{project-root}/t.md">Template</item>
    <item cmd="*exit">Exit</item>
  </menu>
</agent>
\`\`\`
`;

function parseError(text: string, file = 'agents/bad.md'): AgentParseError {
  let caught: unknown;
  try {
    parseAgent(text, file);
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(AgentParseError);
  return caught as AgentParseError;
}

describe('agent-parser', () => {
  test('parseAgent: source dialect in a fence, with persona, critical actions, commands and prompts', () => {
    const agent = parseAgent(SOURCE_AGENT, 'agents/alex.md');
    expect(agent.dialect).toBe('source');
    expect(agent).toMatchObject({ id: 'bundle/agents/alex.md', name: 'Alex', title: 'Requirements Facilitator', icon: '🧭' });
    expect(agent.persona).toEqual({
      role: 'Requirements facilitator',
      identity: 'Helps teams say what they need & why.',
      communication_style: 'Warm, one question at a time',
      principles: '- Listen first\n- Write it down',
    });
    expect(agent.criticalActions).toEqual([
      'Load into memory {bundle-root}/config.yaml and set variables: project_name, output_folder, user_name',
      "Remember the user's name is {user_name}",
      'ALWAYS communicate in {communication_language}',
    ]);
    expect(agent.commands.map((c) => c.cmd)).toEqual(['*help', '*intake', '*check', '*task', '*say', '*retro', '*exit']);
    expect(agent.commands[0]).toEqual({ cmd: '*help', description: 'Show the command list', targets: [] });
    expect(agent.commands[1].target).toEqual({ kind: 'workflow', value: '{bundle-root}/workflows/intake/workflow.yaml' });
    expect(agent.commands[2].target?.kind).toBe('validate-workflow');
    expect(agent.commands[3].target?.kind).toBe('exec');
    expect(agent.commands[4].target).toEqual({ kind: 'action', value: '#greet' });
    expect(agent.commands[5].targets).toEqual([
      { kind: 'workflow', value: '{bundle-root}/workflows/retro.md' },
      { kind: 'data', value: '{bundle-root}/data/team.csv' },
    ]);
    expect(agent.prompts).toEqual([{ id: 'greet', text: 'Say hello to <user> & smile.\n  Indented line' }]);
    expect(agent.file).toBe('agents/alex.md');
  });

  test('parseAgent: source dialect as bare XML', () => {
    const bare = SOURCE_AGENT.replace('```xml', '').replace(/```\s*$/, '');
    const agent = parseAgent(bare, 'agents/alex.md');
    expect(agent.name).toBe('Alex');
    expect(agent.commands).toHaveLength(7);
  });

  test('parseAgent: compiled dialect with front matter, activation steps, handlers, rules and menu', () => {
    const agent = parseAgent(COMPILED_AGENT, 'bmad/bmm/agents/dev.md');
    expect(agent.dialect).toBe('compiled');
    expect(agent.name).toBe('Amelia');
    expect(agent.criticalActions).toEqual([
      'Load persona from this current agent file (already in context)',
      'IMMEDIATE ACTION:\n- Load and read {project-root}/bmad/bmm/config.yaml NOW\n- Store ALL fields as session variables',
      "Remember: user's name is {user_name}",
    ]);
    expect(agent.persona.principles).toBe('Tests first, it\'s "simple".');
    expect(agent.menuHandlers).toEqual([{ type: 'workflow', text: 'When menu item has: workflow="path/to/workflow.yaml"\n1. Load the engine' }]);
    expect(agent.rules).toEqual(['ALWAYS communicate in {communication_language}', 'Stay in character']);
    expect(agent.commands.map((c) => [c.cmd, c.target?.kind])).toEqual([
      ['*help', undefined],
      ['*develop', 'workflow'],
      ['*validate', 'validate-workflow'],
      ['*tmpl', 'tmpl'],
      ['*exit', undefined],
    ]);
  });

  test('parseAgent: activation <steps><s> and <core_principles> of the web orchestrator shape', () => {
    const agent = parseAgent(
      `<agent id="o" name="Orchestrator" title="Web Orchestrator" localskip="true">
  <activation critical="true"><steps><s>1:Read this node</s><s>2:Greet</s></steps><rules><r>No files</r></rules></activation>
  <persona><role>R</role><identity>I</identity><communication_style>C</communication_style>
    <core_principles><p>One</p><p>Two</p></core_principles></persona>
  <cmds><c cmd="*help">Help</c></cmds>
</agent>`,
      'o.md',
    );
    expect(agent.criticalActions).toEqual(['1:Read this node', '2:Greet']);
    expect(agent.rules).toEqual(['No files']);
    expect(agent.persona.principles).toBe('- One\n- Two');
    expect(agent.dialect).toBe('source');
  });

  test('parseAgent: an item attribute written skill:<name> (BMAD 6.2) names a skill, whatever the attribute', () => {
    const agent = parseAgent(
      '<agent name="N" title="T"><menu><item cmd="CP" exec="skill:bmad-create-prd">[CP] Create PRD</item><item cmd="X" exec="{project-root}/x.md">[X] X</item><item cmd="E" exec="skill:">[E] Empty</item></menu></agent>',
      'agents/pm.md',
    );
    expect(agent.commands.map((c) => c.targets)).toEqual([[{ kind: 'skill', value: 'bmad-create-prd' }], [{ kind: 'exec', value: '{project-root}/x.md' }], [{ kind: 'exec', value: 'skill:' }]]);
  });

  test('parseAgent: a missing id falls back to the file name; a missing persona is empty', () => {
    const agent = parseAgent('<agent name="N" title="T"><cmds/></agent>', 'agents/my-agent.md');
    expect(agent.id).toBe('my-agent');
    expect(agent.persona).toEqual({ role: '', identity: '', communication_style: '', principles: '' });
    expect(agent.commands).toEqual([]);
  });

  test('parseAgent: a file without <agent> fails naming the file', () => {
    const error = parseError('# Just markdown\n\n<agents>not it</agents>\n', 'agents/README.md');
    expect(error.message).toBe('Invalid agent file agents/README.md: missing <agent> element');
    expect(error.file).toBe('agents/README.md');
    expect(error.name).toBe('AgentParseError');
  });

  test('parseAgent: an unclosed tag is reported with its line number', () => {
    const text = '# Title\n\n<agent name="N" title="T">\n  <persona>\n    <role>R</role>\n  <cmds>\n  </cmds>\n</agent>\n';
    const error = parseError(text);
    expect(error.message).toContain('unclosed tag <persona>');
    expect(error.message).toContain('line 4');
    expect(error.line).toBe(4);
  });

  test('parseAgent: an agent that never closes names <agent> and its line', () => {
    const error = parseError('\n\n<agent name="N" title="T">\n<persona></persona>\n');
    expect(error.message).toBe('Invalid agent file agents/bad.md: unclosed tag <agent> (line 3)');
  });

  test('parseAgent: a stray closing tag and an unterminated start tag are reported with lines', () => {
    expect(parseError('<agent name="N" title="T">\n</persona>\n</agent>').message).toContain('unexpected closing tag </persona> inside <agent> (line 2)');
    expect(parseError('<agent name="N" title="T">\n<cmds\n').message).toContain('unclosed tag <cmds> (line 2)');
    expect(parseError('<agent name="N" title="T">\n<!-- never ends\n').message).toContain('unclosed comment (line 2)');
  });

  test('parseAgent: missing name, title or cmd attributes name the field', () => {
    expect(parseError('<agent title="T"></agent>').field).toBe('name');
    expect(parseError('<agent name="N"></agent>').message).toContain('has no title attribute');
    const noCmd = parseError('<agent name="N" title="T">\n<menu>\n<item workflow="x">X</item>\n</menu></agent>');
    expect(noCmd.message).toContain('<item> (line 3) has no cmd attribute');
    expect(noCmd.field).toBe('commands[0].cmd');
  });
});

describe('xml-reader', () => {
  test('decodeEntities: the five entities and numeric references; a bare & stays', () => {
    expect(decodeEntities('&lt;a&gt; &amp; &quot;q&quot; &apos;s&apos; &#65;&#x42; AT&T &bogus;')).toBe('<a> & "q" \'s\' AB AT&T &bogus;');
  });

  test('readElement: tolerates a lone < in text, single-quoted, bare and unquoted attributes', () => {
    const el = readElement(`<r a='1' b c=x>if a < b then <b>bold</b> <?pi?><!DOCTYPE x></r>`, 0);
    expect(el.attrs).toEqual({ a: '1', b: '', c: 'x' });
    expect(el.children).toEqual(['if a < b then ', { name: 'b', attrs: {}, children: ['bold'], line: 1 }, ' ']);
  });

  test('readElement: attribute values may hold > and <', () => {
    const el = readElement('<c cmd="*x" action="a > b < c">t</c>', 0);
    expect(el.attrs.action).toBe('a > b < c');
  });

  test('readElement: errors carry the line', () => {
    expect(() => readElement('<a>\n<b>\n</a>', 0)).toThrow(XmlSyntaxError);
    expect(() => readElement('<a>\n<b>\n</a>', 0)).toThrow('unclosed tag <b> (opened at line 2, found </a> at line 3) (line 2)');
  });

  test('tidy: removes common indentation but keeps the first line and structure', () => {
    expect(tidy('\n   first\n     - a\n       - b\n   ')).toBe('first\n  - a\n    - b');
    expect(tidy('  head:\n      - x\n      - y')).toBe('head:\n- x\n- y');
  });
});
