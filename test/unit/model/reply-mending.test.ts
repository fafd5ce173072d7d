import { normalizeReply, type ReplyContext } from '../../../activities/model/normalize-response';
import type { ChatMessage, ToolDefinition } from '../../../common/messages';
import { estimatePromptTokens, estimateTextTokens } from '../../../common/token-estimate';

const TOOLS: ToolDefinition[] = [
  { type: 'function', function: { name: 'read_file', description: 'Read', parameters: { type: 'object' } } },
  { type: 'function', function: { name: 'save_output', description: 'Save', parameters: { type: 'object' } } },
];
const SENT: ChatMessage[] = [
  { role: 'system', content: 'You are a facilitator with a long system prompt.'.repeat(10) },
  { role: 'user', content: 'Start.' },
];
const REQUEST: ReplyContext = { messages: SENT, tools: TOOLS };

function reply(message: Record<string, unknown>, usage?: unknown, finishReason = 'stop'): unknown {
  return { model: 'm', choices: [{ message: { role: 'assistant', ...message }, finish_reason: finishReason }], ...(usage !== undefined ? { usage } : {}) };
}

describe('usage sanitisation', () => {
  const promptEstimate = estimatePromptTokens(SENT, TOOLS);
  const replyText = 'Hello there, this is the reply.';
  const completionEstimate = estimateTextTokens(replyText);

  it('usage: sane numbers pass untouched without warnings', () => {
    const result = normalizeReply(reply({ content: replyText }, { prompt_tokens: 100, completion_tokens: 7, total_tokens: 107 }), REQUEST);
    expect(result.usage).toEqual({ promptTokens: 100, completionTokens: 7, totalTokens: 107 });
    expect(result.warnings).toBeUndefined();
    expect(result.usageFixed).toBeUndefined();
  });

  it('usage: a fraction is rounded and said so; the total follows', () => {
    const result = normalizeReply(reply({ content: replyText }, { prompt_tokens: 10.5, completion_tokens: 2, total_tokens: 12.5 }), REQUEST);
    expect(result.usage).toEqual({ promptTokens: 11, completionTokens: 2, totalTokens: 13 });
    expect(result.warnings).toContain('usage.prompt_tokens was 10.5; recorded as 11');
    expect(result.warnings!.some((w) => w.startsWith('usage.total_tokens was 12.5'))).toBe(true);
    expect(result.usageFixed).toBe(2);
  });

  it.each([
    ['negative', -3],
    ['absurd', 1e19],
    ['huge', 1e308],
    ['a NaN string', 'NaN'],
    ['a word', 'lots'],
    ['null', null],
  ])('usage: a %s prompt_tokens becomes the estimate of the sent messages', (_what, value) => {
    const result = normalizeReply(reply({ content: replyText }, { prompt_tokens: value, completion_tokens: 4, total_tokens: 99 }), REQUEST);
    expect(result.usage!.promptTokens).toBe(promptEstimate);
    expect(result.usage!.completionTokens).toBe(4);
    expect(result.usage!.totalTokens).toBe(promptEstimate + 4);
    expect(result.warnings!.some((w) => w.startsWith('usage.prompt_tokens was ') && w.endsWith(`recorded as ${promptEstimate} (estimated)`))).toBe(true);
    expect(result.warnings!.some((w) => w.startsWith('usage.total_tokens was 99'))).toBe(true);
  });

  it('usage: a bad completion_tokens becomes the estimate of the reply text and tool-call arguments', () => {
    const args = '{"file_path":"docs/brief.md"}';
    const result = normalizeReply(
      reply({ content: replyText, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: args } }] }, { prompt_tokens: 50, completion_tokens: -1 }),
      REQUEST,
    );
    expect(result.usage!.completionTokens).toBe(estimateTextTokens(replyText + args));
    expect(result.usage!.completionTokens).toBeGreaterThan(completionEstimate);
  });

  it('usage: missing fields are estimated and a missing total is the sum; every fix is a warning', () => {
    const result = normalizeReply(reply({ content: replyText }, {}), REQUEST);
    expect(result.usage).toEqual({ promptTokens: promptEstimate, completionTokens: completionEstimate, totalTokens: promptEstimate + completionEstimate });
    expect(result.warnings).toEqual([
      `usage.prompt_tokens was missing; recorded as ${promptEstimate} (estimated)`,
      `usage.completion_tokens was missing; recorded as ${completionEstimate} (estimated)`,
      `usage.total_tokens was missing; recorded as ${promptEstimate + completionEstimate}`,
    ]);
    expect(result.usageFixed).toBe(3);
  });

  it('usage: an inconsistent total is replaced by the sum', () => {
    const result = normalizeReply(reply({ content: 'x' }, { prompt_tokens: 5, completion_tokens: 5, total_tokens: 3 }), REQUEST);
    expect(result.usage!.totalTokens).toBe(10);
    expect(result.warnings).toEqual(['usage.total_tokens was 3 (not prompt_tokens + completion_tokens = 10); recorded as 10']);
  });

  it('usage: a usage that is not an object is ignored with a warning, and the reply is still accepted', () => {
    const result = normalizeReply(reply({ content: 'still fine' }, 'lots of tokens'), REQUEST);
    expect(result.message.content).toBe('still fine');
    expect(result.usage).toBeNull();
    expect(result.warnings).toEqual(['usage was "lots of tokens", not an object; ignored']);
  });

  it('usage: no usage at all is null, without a warning', () => {
    const result = normalizeReply(reply({ content: 'x' }), REQUEST);
    expect(result.usage).toBeNull();
    expect(result.warnings).toBeUndefined();
  });
});

describe('tool calls written as text', () => {
  const block = (name: string, args: unknown, key = 'arguments'): string => `<tool_call>\n${JSON.stringify({ name, [key]: args })}\n</tool_call>`;

  it('text tool calls: a block naming an offered tool becomes a tool call; the rest of the text stays', () => {
    const content = `Let me read the brief.\n${block('read_file', { file_path: 'brief.md' })}`;
    const result = normalizeReply(reply({ content }), REQUEST);
    expect(result.message.content).toBe('Let me read the brief.');
    expect(result.message.tool_calls).toHaveLength(1);
    const call = result.message.tool_calls![0]!;
    expect(call.id).toMatch(/^call_[0-9a-f]+$/);
    expect(call.function).toEqual({ name: 'read_file', arguments: '{"file_path":"brief.md"}' });
    expect(result.warnings!.some((w) => w.includes('<tool_call>') && w.includes('read_file'))).toBe(true);
  });

  it('text tool calls: two blocks give two calls with distinct ids, content null; parameters and string arguments count too', () => {
    const content = `${block('read_file', { file_path: 'a' }, 'parameters')}\n${block('save_output', '{"text":"b"}')}`;
    const result = normalizeReply(reply({ content }), REQUEST);
    expect(result.message.content).toBeNull();
    expect(result.message.tool_calls!.map((c) => c.function)).toEqual([
      { name: 'read_file', arguments: '{"file_path":"a"}' },
      { name: 'save_output', arguments: '{"text":"b"}' },
    ]);
    expect(result.message.tool_calls![0]!.id).not.toBe(result.message.tool_calls![1]!.id);
  });

  it('text tool calls: a missing closing tag at the very end is tolerated', () => {
    const content = `On it.\n<tool_call>\n{"name": "read_file", "arguments": {"file_path": "x.md"}}`;
    const result = normalizeReply(reply({ content }, undefined, 'length'), REQUEST);
    expect(result.message.content).toBe('On it.');
    expect(result.message.tool_calls![0]!.function).toEqual({ name: 'read_file', arguments: '{"file_path":"x.md"}' });
  });

  it('text tool calls: an unknown tool name leaves the text untouched', () => {
    const content = `Sure.\n${block('delete_everything', {})}`;
    const result = normalizeReply(reply({ content }), REQUEST);
    expect(result.message.content).toBe(content);
    expect(result.message.tool_calls).toBeUndefined();
    expect(result.warnings).toBeUndefined();
  });

  it('text tool calls: bad JSON in any block leaves the whole text untouched', () => {
    const content = `${block('read_file', { file_path: 'a' })}\n<tool_call>{"name": "read_file", "arguments": {</tool_call>`;
    const result = normalizeReply(reply({ content }), REQUEST);
    expect(result.message.content).toBe(content);
    expect(result.message.tool_calls).toBeUndefined();
  });

  it('text tool calls: not parsed when the request offered no tools, or when there are structured tool calls', () => {
    const content = block('read_file', { file_path: 'a' });
    expect(normalizeReply(reply({ content }), { messages: SENT, tools: [] }).message.content).toBe(content);
    const structured = normalizeReply(reply({ content, tool_calls: [{ id: 'c9', type: 'function', function: { name: 'save_output', arguments: '{}' } }] }), REQUEST);
    expect(structured.message.content).toBe(content);
    expect(structured.message.tool_calls!.map((c) => c.id)).toEqual(['c9']);
  });
});

describe('refusal and reasoning', () => {
  it('refusal: a refusal string sets the flag and becomes the content', () => {
    const result = normalizeReply(reply({ content: null, refusal: "I can't help with that." }), REQUEST);
    expect(result.refusal).toBe(true);
    expect(result.message.content).toBe("I can't help with that.");
    expect(normalizeReply(reply({ content: 'ok', refusal: null }), REQUEST).refusal).toBeUndefined();
  });

  it('reasoning: reasoning_content, or reasoning, is kept on the message when it is a non-empty string', () => {
    expect(normalizeReply(reply({ content: 'a', reasoning_content: 'I think' }), REQUEST).message.reasoning_content).toBe('I think');
    expect(normalizeReply(reply({ content: 'a', reasoning: 'Hmm' }), REQUEST).message.reasoning_content).toBe('Hmm');
    expect('reasoning_content' in normalizeReply(reply({ content: 'a', reasoning_content: '' }), REQUEST).message).toBe(false);
    expect('reasoning_content' in normalizeReply(reply({ content: 'a', reasoning_content: { odd: true } }), REQUEST).message).toBe(false);
  });
});
