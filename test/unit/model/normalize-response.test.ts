import { ApplicationFailure } from '@temporalio/common';
import { normalizeReply } from '../../../activities/model/normalize-response';
import { MODEL_BAD_RESPONSE } from '../../../common/model-call';

function reply(message: Record<string, unknown>, extra: Record<string, unknown> = {}): unknown {
  return { id: 'x', model: 'm-1', choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: 'stop' }], ...extra };
}

function failureOf(fn: () => unknown): ApplicationFailure {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApplicationFailure);
    return err as ApplicationFailure;
  }
  throw new Error('expected a failure');
}

describe('normalizeReply', () => {
  it('normalizeReply: text with usage', () => {
    const result = normalizeReply(reply({ content: 'Hello' }, { usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } }));
    expect(result).toEqual({
      message: { role: 'assistant', content: 'Hello' },
      usage: { promptTokens: 3, completionTokens: 2, totalTokens: 5 },
      model: 'm-1',
      finishReason: 'stop',
    });
    expect('tool_calls' in result.message).toBe(false);
  });

  it('normalizeReply: no usage gives null; a missing total is summed', () => {
    expect(normalizeReply(reply({ content: 'a' })).usage).toBeNull();
    expect(normalizeReply(reply({ content: 'a' }, { usage: { prompt_tokens: 4, completion_tokens: 1 } })).usage?.totalTokens).toBe(5);
  });

  it('normalizeReply: keeps only function calls, fills missing ids and types, stringifies object arguments', () => {
    const result = normalizeReply(
      reply({
        content: null,
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'read_file', arguments: '{"file_path": ' } },
          { id: 'call_b', type: 'custom', custom: { name: 'x', input: 'y' } },
          { function: { name: 'save_output', arguments: { file_path: 'o.md', content: 'c' } } },
          { id: 'call_d', type: 'function', function: { name: 'read_file' } },
        ],
      }),
    );
    const calls = result.message.tool_calls!;
    expect(calls).toHaveLength(3);
    expect(calls[0]).toEqual({ id: 'call_a', type: 'function', function: { name: 'read_file', arguments: '{"file_path": ' } });
    expect(calls[1]!.id).toMatch(/^call_[0-9a-f-]{36}$/);
    expect(calls[1]!.function).toEqual({ name: 'save_output', arguments: '{"file_path":"o.md","content":"c"}' });
    expect(calls[2]!.function.arguments).toBe('{}');
  });

  it('normalizeReply: an empty tool_calls array is left out', () => {
    expect(normalizeReply(reply({ content: 'x', tool_calls: [] })).message).toEqual({ role: 'assistant', content: 'x' });
  });

  it('normalizeReply: content parts are joined; a refusal stands in for missing content', () => {
    expect(normalizeReply(reply({ content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] })).message.content).toBe('ab');
    expect(normalizeReply(reply({ content: null, refusal: 'I cannot help with that.' })).message.content).toBe(
      'I cannot help with that.',
    );
  });

  it.each([
    ['no choices', { id: 'x', choices: [] }, 'choices'],
    ['no choices field', { id: 'x' }, 'choices'],
    ['a choice without message', { choices: [{ index: 0 }] }, 'choices.0.message'],
    ['not an object', 'oops', 'reply'],
  ])('normalizeReply: %s is a retryable ModelBadResponse', (_what, body, where) => {
    const failure = failureOf(() => normalizeReply(body));
    expect(failure.type).toBe(MODEL_BAD_RESPONSE);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toContain(where);
  });
});
