/**
 * The deterministic pieces that keep skills in a session, tested without a server: which tool
 * messages are skill activations, what a summary carries on, the view that keeps an activation
 * whole past the pruning, and the active skills a reply's results make.
 */
import type { ChatMessage, ToolCall } from '../../../common/messages';
import { SKILL_INSTRUCTIONS_NOTE, skillActivations, skillInstructions, viewMessages } from '../../../common/model-view';
import type { RuntimeContext } from '../../../common/runtime-context';
import { MAX_ACTIVE_SKILLS, withActivatedSkills } from '../../../workflows/turn/active-skills';

const call = (id: string, name: string, args: Record<string, unknown>): ToolCall => ({ id, type: 'function', function: { name, arguments: JSON.stringify(args) } });
const activation = (name: string, text: string) =>
  JSON.stringify({
    success: true,
    path: `/p/.claude/skills/${name}`,
    content: `<skill_content name="${name}">${text}</skill_content>`,
    skill: { name, dir: `/p/.claude/skills/${name}`, hash: 'abc' },
  });

const transcript: ChatMessage[] = [
  { role: 'system', content: 'system prompt' },
  { role: 'user', content: 'go' },
  { role: 'assistant', content: null, tool_calls: [call('a1', 'activate_skill', { name: 'notes' }), call('r1', 'read_file', { file_path: 'x.md' })] },
  { role: 'tool', tool_call_id: 'a1', content: activation('notes', 'Write notes.') },
  { role: 'tool', tool_call_id: 'r1', content: JSON.stringify({ success: true, content: 'x'.repeat(100) }) },
  { role: 'assistant', content: null, tool_calls: [call('a2', 'activate_skill', { name: 'nope' }), call('a3', 'activate_skill', { name: 'notes' })] },
  { role: 'tool', tool_call_id: 'a2', content: JSON.stringify({ success: false, error: 'No skill named nope' }) },
  { role: 'tool', tool_call_id: 'a3', content: activation('notes', 'Write notes, version 2.') },
  { role: 'assistant', content: 'done' },
];

describe('skills in the model view', () => {
  test('skillActivations: the successful activate_skill results in a range, named by their calls', () => {
    expect(skillActivations(transcript, 0, transcript.length)).toEqual([3, 7]);
    expect(skillActivations(transcript, 4, transcript.length)).toEqual([7]);
    expect(skillActivations(transcript, 0, 4)).toEqual([3]);
  });

  test('skillInstructions: the newest of each skill, under the note; nothing for no activation', () => {
    const text = skillInstructions(transcript, [3, 7]);
    expect(text.startsWith(SKILL_INSTRUCTIONS_NOTE)).toBe(true);
    expect(text).toContain('version 2');
    expect(text).not.toContain('Write notes.</skill_content>');
    expect(skillInstructions(transcript, [])).toBe('');
  });

  test('viewMessages: pruning stubs tool results but the kept activation, which goes whole', () => {
    const view = { head: 1, from: 1, pruneBefore: 8, keep: [3] };
    const sent = viewMessages(transcript, view);
    expect(sent[3]).toEqual(transcript[3]);
    expect(String(sent[4]!.content)).toContain('"pruned":true');
    expect(String(sent[7]!.content)).toContain('"pruned":true');
    // Without keep, the activation is a stub like any result.
    expect(String(viewMessages(transcript, { head: 1, from: 1, pruneBefore: 8 })[3]!.content)).toContain('"pruned":true');
  });
});

describe('active skills', () => {
  const context = { projectRoot: '/p', variables: {}, readRoots: [], writeRoots: [], bundleRoot: '/p', coreRoot: '/p', maxReadBytes: 1 } as RuntimeContext;
  const results = (calls: ToolCall[]) => calls.map((c) => (c.function.name === 'activate_skill' ? JSON.parse(activation(JSON.parse(c.function.arguments).name, 'x')) : { success: true }));

  test("withActivatedSkills: the reply's activations come first, newest first, once each; the context itself when none", () => {
    const calls = [call('1', 'activate_skill', { name: 'a' }), call('2', 'read_file', {}), call('3', 'activate_skill', { name: 'b' })];
    const next = withActivatedSkills(context, calls, results(calls));
    expect(next.activeSkills!.map((s) => s.name)).toEqual(['b', 'a']);
    expect(next.activeSkills![0]).toEqual({ name: 'b', dir: '/p/.claude/skills/b', hash: 'abc' });
    const again = withActivatedSkills(next, [calls[0]!], results([calls[0]!]));
    expect(again.activeSkills!.map((s) => s.name)).toEqual(['a', 'b']);
    const reads = [call('4', 'read_file', {})];
    expect(withActivatedSkills(next, reads, results(reads))).toBe(next);
    // A failed activation changes nothing.
    expect(withActivatedSkills(next, [calls[0]!], [{ success: false, error: 'no' }])).toBe(next);
  });

  test(`withActivatedSkills: at most ${MAX_ACTIVE_SKILLS} skills stay active, the oldest dropped`, () => {
    const calls = Array.from({ length: MAX_ACTIVE_SKILLS + 2 }, (_, i) => call(String(i), 'activate_skill', { name: `s${i}` }));
    const next = withActivatedSkills(context, calls, results(calls));
    expect(next.activeSkills).toHaveLength(MAX_ACTIVE_SKILLS);
    expect(next.activeSkills![0]!.name).toBe(`s${MAX_ACTIVE_SKILLS + 1}`);
  });
});
