/**
 * The tool definitions (common/tools/) are the one place a tool is described. Each built-in one is
 * consistent with itself and with its implementation; the model is sent exactly what it was sent
 * before the definitions existed (tool-definitions.expected.json); and a made-up definition flows
 * through definitions, argument checks, the approval policy, previews and Web UI summaries without
 * any other code knowing it, which is what lets a built-in tool be added in its own files.
 */
import { ACTIVATE_SKILL } from '../../../common/tools/activate-skill';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { TOOL_ACTIVITIES, TOOL_IMPLEMENTATIONS, TOOLS } from '../../../activities/tools/dispatch';
import { parseArgsOf } from '../../../activities/tools/parse-args';
import type { ToolCall } from '../../../common/messages';
import { prunedToolMessage } from '../../../common/model-view';
import { argsSchema, builtInToolDefinitions, LOOP_TOOL_DEFINITIONS, toFunctionParameters, TOOL_DEFINITIONS, toolDefinition } from '../../../common/tool-definitions';
import { RUN_COMMAND } from '../../../common/tools/run-command';
import { isLoopToolName, isToolName, LOOP_TOOL_NAMES, LOOP_TOOL_SPECS, loopToolSpec, TOOL_NAMES, TOOL_SPECS, toolSpec } from '../../../common/tools';
import { argsOf, callArguments, defineTool, type ToolSpec, type ToolSpecBase } from '../../../common/tools/tool-spec';
import { parseAgent } from '../../../bundle/agent-parser';
import { buildSystemPrompt } from '../../../bundle/system-prompt';
import { policyCovers, previewOf } from '../../../workflows/turn/approvals';
import { toolSummary } from '../../../workflows/turn/tool-calls';
import { sameTargetWrites } from '../../../workflows/turn/turn-tools';
import { sourceAgent } from '../bundle/fixtures';

const root = resolve(__dirname, '../../..');
const call = (name: string, args: unknown): ToolCall => ({ id: 'c1', type: 'function', function: { name, arguments: JSON.stringify(args) } });

describe('built-in tool definitions', () => {
  test('the model is sent exactly what it was sent before the definitions existed', () => {
    const expected: unknown = JSON.parse(readFileSync(join(__dirname, 'tool-definitions.expected.json'), 'utf8'));
    // What a session with skills and without commands offers (the command tool is offered only when commands are on).
    const offered = [...builtInToolDefinitions({ skills: true }), ...LOOP_TOOL_DEFINITIONS];
    expect(JSON.parse(JSON.stringify(offered))).toEqual(expected);
    // Byte for byte, key order included.
    expect(JSON.stringify(offered)).toBe(JSON.stringify(expected));
    expect(builtInToolDefinitions({ skills: false }).map((d) => d.function.name)).toEqual(['read_file', 'execute_workflow', 'save_output', 'edit_file']);
    // The workspace tools come with skills or commands (either), so the default list does not grow.
    expect(builtInToolDefinitions({ skills: false, commands: true }).map((d) => d.function.name)).toEqual([
      'read_file',
      'execute_workflow',
      'save_output',
      'edit_file',
      'list_files',
      'search_files',
      'run_command',
    ]);
    expect(builtInToolDefinitions({ skills: true }).map((d) => d.function.name)).toEqual(['read_file', 'execute_workflow', 'save_output', 'edit_file', 'list_files', 'search_files', 'activate_skill']);
  });

  test('names, lists and definitions agree; every name is unique', () => {
    expect(TOOL_NAMES).toEqual(['read_file', 'execute_workflow', 'save_output', 'edit_file', 'list_files', 'search_files', 'activate_skill', 'run_command']);
    expect(LOOP_TOOL_NAMES).toEqual(['ask_question', 'task_completion']);
    const all = [...TOOL_NAMES, ...LOOP_TOOL_NAMES];
    expect(new Set(all).size).toBe(all.length);
    for (const spec of TOOL_SPECS) {
      expect(isToolName(spec.name) && !isLoopToolName(spec.name)).toBe(true);
      expect(toolSpec(spec.name)).toBe(spec);
    }
    for (const spec of LOOP_TOOL_SPECS) {
      expect(isLoopToolName(spec.name) && !isToolName(spec.name)).toBe(true);
      expect(loopToolSpec(spec.name)).toBe(spec);
    }
    expect(toolSpec('constructor')).toBeUndefined();
  });

  test.each<ToolSpecBase>([...TOOL_SPECS, ...LOOP_TOOL_SPECS])('$name: its JSON schema is the one derived from its argument schema, and its target is a required string', (spec) => {
    const sent = [...TOOL_DEFINITIONS, ...LOOP_TOOL_DEFINITIONS].find((d) => d.function.name === spec.name)!;
    expect(sent).toEqual(toolDefinition(spec));
    expect(sent.function.parameters).toEqual(toFunctionParameters(argsSchema(spec)));
    expect(sent.function.description).toBe(spec.description);
    expect(Object.keys(sent.function.parameters.properties as object)).toEqual(Object.keys(spec.parameters));
    if (spec.target !== undefined) {
      const target = spec.parameters[spec.target as keyof typeof spec.parameters] as { type: string; optional?: boolean };
      expect(target.type).toBe('string');
      expect(target.optional).toBeUndefined();
    }
    expect(spec.promptRules.length).toBeGreaterThan(0);
    for (const rule of spec.promptRules) expect(rule).toContain(spec.name);
  });

  test('access, retries and content: reads are quick and side-effect free, the writes persist', () => {
    expect(TOOL_SPECS.map((s) => [s.name, s.access, s.retries, s.target, 'content' in s ? s.content : undefined])).toEqual([
      ['read_file', 'read', 'quick', 'file_path', undefined],
      ['execute_workflow', 'read', 'quick', 'workflow_path', undefined],
      ['save_output', 'write', 'persistent', 'file_path', 'content'],
      ['edit_file', 'write', 'persistent', 'file_path', 'new_text'],
      ['list_files', 'read', 'quick', 'pattern', undefined],
      ['search_files', 'read', 'quick', 'pattern', undefined],
      ['activate_skill', 'read', 'quick', 'name', undefined],
      ['run_command', 'write', 'once', 'command', undefined],
    ]);
    expect(TOOL_SPECS.map((s) => [s.name, s.replaces, s.modes])).toEqual([
      ['read_file', undefined, undefined],
      ['execute_workflow', undefined, undefined],
      ['save_output', undefined, ['mode']],
      ['edit_file', 'old_text', ['replace_all']],
      ['list_files', undefined, undefined],
      ['search_files', undefined, undefined],
      ['activate_skill', undefined, undefined],
      ['run_command', undefined, undefined],
    ]);
    expect(LOOP_TOOL_SPECS.map((s) => [s.name, s.loop, s.target])).toEqual([
      ['ask_question', 'question', 'question'],
      ['task_completion', 'completion', 'summary'],
    ]);
  });

  test('each definition has its implementation and activity, in the same order', () => {
    expect(TOOL_IMPLEMENTATIONS.map((t) => t.spec)).toEqual([...TOOL_SPECS]);
    expect(Object.keys(TOOLS)).toEqual([...TOOL_NAMES]);
    expect(Object.keys(TOOL_ACTIVITIES)).toEqual([...TOOL_NAMES]);
  });

  test('argument checks come from the definition and keep their messages', () => {
    const [readFile, executeWorkflow, saveOutput] = TOOL_SPECS;
    expect(parseArgsOf(readFile, { file_path: 3 })).toEqual({ ok: false, error: 'Invalid arguments for read_file: file_path: expected string, received number' });
    expect(parseArgsOf(readFile, { file_path: '' })).toEqual({ ok: false, error: 'Invalid arguments for read_file: file_path: must not be empty' });
    expect(parseArgsOf(saveOutput, { file_path: 'x' })).toEqual({ ok: false, error: 'Invalid arguments for save_output: content: required string is missing' });
    expect(parseArgsOf(saveOutput, { file_path: 'x', content: '' })).toEqual({ ok: true, value: { file_path: 'x', content: '' } });
    // JSON text goes through the engine's one parser, with its one error text.
    expect(parseArgsOf(saveOutput, '{"file_path":"x","content":""}')).toEqual({ ok: true, value: { file_path: 'x', content: '' } });
    expect(parseArgsOf(saveOutput, '{"file_path": ')).toEqual({ ok: false, error: expect.stringMatching(/^Arguments for save_output are not valid JSON \(.+\); send a JSON object$/) });
    expect(parseArgsOf(executeWorkflow, { workflow_path: 'w', user_input: [] })).toEqual({
      ok: false,
      error: 'Invalid arguments for execute_workflow: user_input: expected object, received array',
    });
    expect(parseArgsOf(executeWorkflow, { workflow_path: 'w' })).toEqual({ ok: true, value: { workflow_path: 'w' } });
  });

  test('the approval policy, previews, summaries and pruned results read the definitions', () => {
    expect(TOOL_SPECS.filter((s) => policyCovers('writes', s.name)).map((s) => s.name)).toEqual(['save_output', 'edit_file', 'run_command']);
    // A command waits for a yes whatever the policy.
    expect(TOOL_SPECS.filter((s) => policyCovers('none', s.name)).map((s) => s.name)).toEqual(['run_command']);
    expect(policyCovers('writes', 'no_such_tool')).toBe(false);
    expect(toolSummary('read_file', { file_path: '{bundle-root}/config.yaml' })).toBe('read_file {bundle-root}/config.yaml');
    expect(toolSummary('execute_workflow', { workflow_path: '{bundle-root}/w.yaml' })).toBe('execute_workflow {bundle-root}/w.yaml');
    expect(toolSummary('save_output', { file_path: '{output_folder}/ui.md', content: 'x'.repeat(4300) })).toBe('save_output {output_folder}/ui.md (4.2 KB)');
    expect(previewOf(call('save_output', { file_path: '{output_folder}/a.md', content: 'héllo' }), { output_folder: '/out' })).toEqual({
      path: '/out/a.md',
      preview: '6 bytes: héllo',
    });
    expect(previewOf(call('read_file', { file_path: '{x}/a' }), {})).toEqual({ path: '{x}/a', preview: '{"file_path":"{x}/a"}' });
    const pruned = prunedToolMessage({ role: 'tool', tool_call_id: 'c1', content: '{"success":true}' }, call('execute_workflow', { workflow_path: 'w.yaml' }));
    expect(JSON.parse(pruned.content).note).toMatch(/^This result of execute_workflow w\.yaml \(16 bytes\)/);
  });

  test('previews and summaries: an append names its mode, an edit shows the diff of what it replaces with what, both bounded', () => {
    const vars = { output_folder: '/out' };
    expect(previewOf(call('save_output', { file_path: '{output_folder}/a.md', content: '## Two\n', mode: 'append' }), vars)).toEqual({
      path: '/out/a.md',
      preview: '[append] 7 bytes: ## Two\n',
    });
    // The default mode, spelled out, is shown as given.
    expect(previewOf(call('save_output', { file_path: 'a.md', content: 'x', mode: 'replace' }), vars).preview).toBe('[replace] 1 bytes: x');
    const edit = { file_path: '{output_folder}/prd.md', old_text: 'stepsCompleted: []', new_text: 'stepsCompleted: [1, 2]' };
    expect(previewOf(call('edit_file', edit), vars)).toEqual({
      path: '/out/prd.md',
      preview: 'replace 18 bytes with 22 bytes:\n@@ -1,1 +1,1 @@\n-stepsCompleted: []\n+stepsCompleted: [1, 2]',
    });
    expect(previewOf(call('edit_file', { ...edit, replace_all: true }), vars).preview).toMatch(/^\[replace_all\] replace 18 bytes with 22 bytes:\n/);
    // replace_all: false is the default and not named.
    expect(previewOf(call('edit_file', { ...edit, replace_all: false }), vars).preview).toMatch(/^replace 18 bytes with 22 bytes:\n/);
    const long = previewOf(call('edit_file', { file_path: 'a.md', old_text: 'o'.repeat(5000), new_text: 'n'.repeat(5000) }), vars).preview;
    expect(long).toBe(`replace 5000 bytes with 5000 bytes:\n@@ -1,1 +1,1 @@\n-${'o'.repeat(199)}…\n+${'n'.repeat(199)}…`);
    expect(toolSummary('save_output', { file_path: '{output_folder}/ui.md', content: 'x'.repeat(4300), mode: 'append' })).toBe('save_output {output_folder}/ui.md (append, 4.2 KB)');
    expect(toolSummary('edit_file', edit)).toBe('edit_file {output_folder}/prd.md (18 B → 22 B)');
    expect(toolSummary('edit_file', { ...edit, replace_all: true })).toBe('edit_file {output_folder}/prd.md (replace_all, 18 B → 22 B)');
  });

  test("the system prompt carries each tool's rules in the order of the lists; loop rules only with loop breakers", () => {
    const agent = parseAgent(sourceAgent(), 'agents/alex.md');
    // The skill tool's rules come with a project's skill catalog only.
    const prompt = buildSystemPrompt(agent, { skillCatalog: 'SKILLS:\n<available_skills></available_skills>' });
    for (const rule of ACTIVATE_SKILL.promptRules) expect(buildSystemPrompt(agent)).not.toContain(rule);
    // The command tool's rules come only when commands are on.
    for (const rule of RUN_COMMAND.promptRules) expect(prompt).not.toContain(rule);
    for (const rule of RUN_COMMAND.promptRules) expect(buildSystemPrompt(agent, { commands: true })).toContain(rule);
    const rules = [...TOOL_SPECS.filter((s) => s !== RUN_COMMAND), ...LOOP_TOOL_SPECS].flatMap((s) => s.promptRules);
    const positions = rules.map((rule) => prompt.indexOf(rule));
    expect(positions.every((p) => p > 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    const without = buildSystemPrompt(agent, { loopBreakers: false });
    for (const rule of LOOP_TOOL_SPECS.flatMap((s) => s.promptRules)) expect(without).not.toContain(rule);
  });
});

describe('a made-up tool', () => {
  const FETCH_URL = defineTool({
    name: 'fetch_url',
    description: 'Fetch a web page and return its text.',
    parameters: {
      url: { type: 'string', nonEmpty: true, description: 'The address to fetch.' },
      headers: { type: 'object', optional: true, description: 'Extra request headers.' },
    },
    access: 'read',
    target: 'url',
    retries: 'quick',
    promptRules: ['- To read a web page, call fetch_url with its address.'],
  });
  const POST_NOTE = defineTool({
    name: 'post_note',
    description: 'Post a note to the team channel.',
    parameters: {
      channel: { type: 'string', nonEmpty: true, description: 'Where to post.' },
      body: { type: 'string', description: 'The note.' },
    },
    access: 'write',
    target: 'channel',
    content: 'body',
    retries: 'persistent',
    promptRules: ['- To tell the team, call post_note.'],
  });
  const specs: readonly ToolSpec[] = [...TOOL_SPECS, FETCH_URL, POST_NOTE];

  test('flows through definitions, argument checks, the approval policy, previews and summaries', () => {
    expect(toolDefinition(POST_NOTE)).toEqual({
      type: 'function',
      function: {
        name: 'post_note',
        description: 'Post a note to the team channel.',
        parameters: {
          type: 'object',
          properties: { channel: { type: 'string', minLength: 1, description: 'Where to post.' }, body: { type: 'string', description: 'The note.' } },
          required: ['channel', 'body'],
        },
      },
    });
    expect(toolDefinition(FETCH_URL).function.parameters).toMatchObject({ required: ['url'], properties: { headers: { type: 'object', additionalProperties: true } } });
    expect(parseArgsOf(POST_NOTE, { channel: '' })).toEqual({
      ok: false,
      error: 'Invalid arguments for post_note: channel: must not be empty; body: required string is missing',
    });
    expect(policyCovers('writes', 'post_note', specs)).toBe(true);
    expect(policyCovers('writes', 'fetch_url', specs)).toBe(false);
    expect(policyCovers('writes', 'post_note')).toBe(false);
    expect(toolSummary('post_note', { channel: '#team', body: 'hi' }, specs)).toBe('post_note #team (2 B)');
    expect(toolSummary('fetch_url', { url: 'https://example.com' }, specs)).toBe('fetch_url https://example.com');
    expect(previewOf(call('post_note', { channel: '#{team}', body: 'ship it' }), { team: 'core' }, specs)).toEqual({ path: '#core', preview: '7 bytes: ship it' });
    expect(previewOf(call('fetch_url', { url: 'https://example.com' }), {}, specs)).toEqual({ path: 'https://example.com', preview: '{"url":"https://example.com"}' });
  });
});

describe('parameter kinds', () => {
  const SET_FLAG = defineTool({
    name: 'set_flag',
    description: 'Set a flag.',
    parameters: {
      name: { type: 'string', nonEmpty: true, description: 'Which flag.' },
      on: { type: 'boolean', description: 'On or off.' },
      scope: { type: 'enum', values: ['user', 'project'], optional: true, description: 'Where.' },
    },
    access: 'write',
    target: 'name',
    retries: 'quick',
    promptRules: ['- To set a flag, call set_flag.'],
  });

  test('a flag and a choice of words: a JSON schema OpenAI function calling accepts, checked arguments, typed values', () => {
    expect(toolDefinition(SET_FLAG).function.parameters).toEqual({
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, description: 'Which flag.' },
        on: { type: 'boolean', description: 'On or off.' },
        scope: { type: 'string', enum: ['user', 'project'], description: 'Where.' },
      },
      required: ['name', 'on'],
    });
    const parsed = parseArgsOf(SET_FLAG, { name: 'x', on: true, scope: 'user' });
    expect(parsed).toEqual({ ok: true, value: { name: 'x', on: true, scope: 'user' } });
    if (parsed.ok) {
      // The checked values are typed from the definition.
      const on: boolean = parsed.value.on;
      const scope: 'user' | 'project' | undefined = parsed.value.scope;
      expect([on, scope]).toEqual([true, 'user']);
    }
    expect(parseArgsOf(SET_FLAG, { name: 'x', on: 'yes', scope: 'team' })).toEqual({
      ok: false,
      error: expect.stringMatching(/^Invalid arguments for set_flag: on: expected boolean, received string; scope: /),
    });
    expect(toolSummary('set_flag', { name: 'dark', on: true, scope: 'project' }, [SET_FLAG])).toBe('set_flag dark');
  });
});

describe('same-target writes in one reply', () => {
  const calls = (...list: [string, Record<string, unknown>][]): ToolCall[] => list.map(([name, args], i) => ({ id: `c${i}`, type: 'function', function: { name, arguments: JSON.stringify(args) } }));

  test('sameTargetWrites: each write waits for the last earlier write to the same target, as written after trimming', () => {
    const reply = calls(
      ['save_output', { file_path: '{output_folder}/prd.md', content: '# PRD\n' }],
      ['read_file', { file_path: '{output_folder}/prd.md' }],
      ['save_output', { file_path: ' {output_folder}/prd.md ', content: '## Goals\n', mode: 'append' }],
      ['save_output', { file_path: '{output_folder}/other.md', content: 'x' }],
      ['edit_file', { file_path: '{output_folder}/prd.md', old_text: 'a', new_text: 'b' }],
      // The same file spelled another way is not recognised (the tool resolves paths, the workflow cannot).
      ['edit_file', { file_path: 'prd.md', old_text: 'a', new_text: 'b' }],
    );
    expect(sameTargetWrites(reply, TOOL_SPECS)).toEqual([-1, -1, 0, -1, 2, -1]);
  });

  test('sameTargetWrites: reads, unknown tools, bad arguments and writes without a target wait for nothing', () => {
    const reply: ToolCall[] = [
      ...calls(
        ['read_file', { file_path: 'a.md' }],
        ['read_file', { file_path: 'a.md' }],
        ['nope', { file_path: 'a.md' }],
        ['save_output', { content: 'x' }],
        ['save_output', { file_path: '  ', content: 'x' }],
      ),
      { id: 'bad', type: 'function', function: { name: 'save_output', arguments: '{"file_path": "a.md", "content' } },
    ];
    expect(sameTargetWrites(reply, TOOL_SPECS)).toEqual([-1, -1, -1, -1, -1, -1]);
  });

  test('sameTargetWrites: an offered write tool (MCP, custom) with a target is ordered the same way', () => {
    const offered = [{ name: 'fs__write_file', kind: 'mcp' as const, access: 'write' as const, retries: 'quick' as const, target: 'path' }];
    const reply = calls(['fs__write_file', { path: '/p/a.md', content: '1' }], ['fs__write_file', { path: '/p/a.md', content: '2' }]);
    expect(sameTargetWrites(reply, offered)).toEqual([-1, 0]);
  });
});

describe('workflow code', () => {
  /** The modules a file imports at run time (type-only imports left out), followed through our own files. */
  function runtimeImports(file: string, seen = new Set<string>()): Set<string> {
    if (seen.has(file)) return seen;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/^(?:import|export)\s+(?!type\s)[^;]*?from\s+'([^']+)'/gms)) {
      const spec = match[1]!;
      if (!spec.startsWith('.')) {
        seen.add(spec);
        continue;
      }
      const base = resolve(dirname(file), spec);
      const candidates = [`${base}.ts`, join(base, 'index.ts')];
      const found = candidates.find((c) => readdirSync(dirname(c)).includes(c.slice(dirname(c).length + 1)));
      if (found) runtimeImports(found, seen);
    }
    return seen;
  }

  test('names no tool in its per-tool code and brings no zod into the sandbox', () => {
    // The walk does find zod where it is imported.
    expect(runtimeImports(join(root, 'common/tool-definitions.ts')).has('zod')).toBe(true);
    const imports = runtimeImports(join(root, 'workflows/index.ts'));
    expect([...imports].filter((m) => m === 'zod' || m.startsWith('zod/'))).toEqual([]);
    expect(imports.has(join(root, 'common/tools/index.ts'))).toBe(true);
    const names = [...TOOL_NAMES, ...LOOP_TOOL_NAMES];
    for (const file of ['turn/tool-calls.ts', 'turn/approvals.ts', 'turn/turn.ts', 'stubs/activity-proxies.ts', 'session/session.ts', 'session/session-run.ts']) {
      const code = readFileSync(join(root, 'workflows', file), 'utf8');
      for (const name of names) expect(`${file}: ${code.includes(name) ? name : ''}`).toBe(`${file}: `);
    }
  });
});

describe('tool call arguments', () => {
  test('callArguments: parsed once per call object; empty text is {}; not JSON is one error text naming the tool', () => {
    const good = call('read_file', { file_path: 'a.md' });
    const first = callArguments(good);
    expect(first).toEqual({ ok: true, value: { file_path: 'a.md' }, record: { file_path: 'a.md' } });
    expect(callArguments(good)).toBe(first);
    expect(argsOf(good)).toEqual({ file_path: 'a.md' });
    expect(callArguments({ function: { name: 'x', arguments: '  ' } })).toEqual({ ok: true, value: {}, record: {} });
    const bad = callArguments({ function: { name: 'save_output', arguments: '{"file_path": ' } });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.error).toMatch(/^Arguments for save_output are not valid JSON \(.+\); send a JSON object$/);
    expect(argsOf({ function: { name: 'x', arguments: '[1, 2]' } })).toEqual({});
  });
});
