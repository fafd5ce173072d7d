import { parseAgent } from '../../../bundle/agent-parser';
import { buildSystemPrompt } from '../../../bundle/system-prompt';
import { compiledAgent, sourceAgent } from './fixtures';

describe('system-prompt', () => {
  const agent = parseAgent(sourceAgent(), 'agents/alex.md');
  const prompt = buildSystemPrompt(agent);

  test('buildSystemPrompt: opens with who the agent is, then identity, style and principles', () => {
    expect(prompt.startsWith('You are Alex, Requirements Facilitator.\n\nRequirements facilitator\n\nIDENTITY:\nHelps teams find what they need.')).toBe(true);
    expect(prompt).toContain('COMMUNICATION STYLE:\nWarm and brief.');
    expect(prompt).toContain('PRINCIPLES:\nListen first.');
  });

  test('buildSystemPrompt: tells the model to use the three tools and never merely acknowledge a load', () => {
    expect(prompt).toContain('CRITICAL INSTRUCTIONS FOR TOOL USE:');
    expect(prompt).toMatch(/load or read a file, call the read_file tool/);
    expect(prompt).toMatch(/To run a workflow, call the execute_workflow tool/);
    expect(prompt).toMatch(/call the save_output tool/);
    expect(prompt).toMatch(/Never just say that you loaded/);
    expect(prompt).toMatch(/wait for its result/);
  });

  test('buildSystemPrompt: lists the commands with their workflow paths', () => {
    expect(prompt).toContain(
      'AVAILABLE COMMANDS:\n*help - Show the commands\n*intake-workflow - Gather initial requirements\n  Workflow: {bundle-root}/workflows/intake-workflow/workflow.yaml\n*exit - Leave',
    );
  });

  test('buildSystemPrompt: explains the workflow execution pattern in order', () => {
    const pattern = prompt.slice(prompt.indexOf('WORKFLOW EXECUTION PATTERN:'));
    const steps = ['1. Find the command', '2. Call execute_workflow', '3. Wait for', '4. Follow the instructions step by step', '5. Save what the workflow produces with save_output'];
    const positions = steps.map((s) => pattern.indexOf(s));
    expect(positions.every((p) => p > 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });

  test('buildSystemPrompt: carries the conversational style rules for guided workflows', () => {
    expect(prompt).toContain('<step n="...">');
    expect(prompt).toMatch(/showing its number and goal/);
    expect(prompt).toMatch(/<action>[^\n]*several related suggestions/);
    expect(prompt).toMatch(/<ask>[^\n]*exactly one clear question/);
    expect(prompt).toContain('2 to 4 sentences unless the moment needs more');
    expect(prompt).toMatch(/paraphrase the user's answer/);
  });

  test('buildSystemPrompt: compiled agents add rules and menu handlers; prompts when present', () => {
    const compiled = parseAgent(compiledAgent('bmm', 'John'), 'bmad/bmm/agents/john.md');
    const text = buildSystemPrompt(compiled);
    expect(text).toContain('RULES:\n- ALWAYS communicate in {communication_language}');
    expect(text).toContain('  Workflow: {project-root}/bmad/bmm/workflows/run/workflow.yaml');
    const withPrompt = { ...compiled, prompts: [{ id: 'greet', text: 'Say hi' }], menuHandlers: [{ type: 'action', text: 'Run #id prompts' }] };
    const full = buildSystemPrompt(withPrompt);
    expect(full).toContain('<prompt id="greet">\nSay hi\n</prompt>');
    expect(full).toContain('MENU HANDLERS');
    expect(full).toContain('[action]\nRun #id prompts');
  });

  test('buildSystemPrompt: is deterministic', () => {
    expect(buildSystemPrompt(agent)).toBe(prompt);
  });
});

test('buildSystemPrompt: says when to ask the user and when to report completion, unless the session turned those tools off', () => {
  const agent = parseAgent(sourceAgent(), 'agents/alex.md');
  expect(buildSystemPrompt(agent)).toMatch(/call ask_question/);
  expect(buildSystemPrompt(agent)).toMatch(/call task_completion/);
  const off = buildSystemPrompt(agent, { loopBreakers: false });
  expect(off).not.toMatch(/ask_question|task_completion/);
});
