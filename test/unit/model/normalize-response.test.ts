import { ApplicationFailure } from '@temporalio/common';
import { normalizeMessagesReply } from '../../../activities/model/anthropic/anthropic-reply';
import { checkReplySize, normalizeReply } from '../../../activities/model/normalize-response';
import { normalizeResponsesReply } from '../../../activities/model/responses/responses-reply';
import type { AssistantMessage } from '../../../common/messages';
import { DEFAULT_MAX_REPLY_BYTES, MODEL_BAD_RESPONSE, MODEL_REPLY_TOO_LARGE, NON_RETRYABLE_MODEL_FAILURES, type ModelFailureDetails } from '../../../common/model-call';

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
    expect(
      normalizeReply(
        reply({
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        }),
      ).message.content,
    ).toBe('ab');
    expect(normalizeReply(reply({ content: null, refusal: 'I cannot help with that.' })).message.content).toBe('I cannot help with that.');
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

  it.each([
    ['a Messages reply without content', () => normalizeMessagesReply({ model: 'c', stop_reason: 'end_turn' }), '(content: '],
    ['a Messages block without a type', () => normalizeMessagesReply({ content: [{ text: 'hi' }] }), '(content.0.type: '],
    ['a Responses reply whose output is not a list', () => normalizeResponsesReply({ status: 'completed', output: 'hi' }), '(output: '],
    ['a Responses reply that is not an object', () => normalizeResponsesReply(null), '(reply: '],
  ])('the other providers: %s is the same retryable ModelBadResponse, naming the field', (_what, normalize, where) => {
    const failure = failureOf(normalize);
    expect(failure.type).toBe(MODEL_BAD_RESPONSE);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toMatch(/^The model server sent an unusable reply \(.*\); it will be retried\.$/);
    expect(failure.message).toContain(where);
    expect((failure.details?.[0] as ModelFailureDetails).status).toBe(200);
  });
});

describe('checkReplySize', () => {
  const text = (content: string): AssistantMessage => ({ role: 'assistant', content });
  /** What the check measures: the message as JSON, in UTF-8 bytes. */
  const size = (message: AssistantMessage): number => Buffer.byteLength(JSON.stringify(message), 'utf8');

  it('checkReplySize: a reply at or under the limit passes', () => {
    const message = text('Hello');
    expect(() => checkReplySize(message, size(message))).not.toThrow();
    expect(() => checkReplySize(message, DEFAULT_MAX_REPLY_BYTES)).not.toThrow();
    expect(DEFAULT_MAX_REPLY_BYTES).toBe(1_000_000);
  });

  it('checkReplySize: a reply one byte over the limit is a non-retryable ModelReplyTooLarge naming both sizes', () => {
    const message = text('x'.repeat(100));
    const bytes = size(message);
    const failure = failureOf(() => checkReplySize(message, bytes - 1));
    expect(failure.type).toBe(MODEL_REPLY_TOO_LARGE);
    expect(failure.nonRetryable).toBe(true);
    expect(NON_RETRYABLE_MODEL_FAILURES).toContain(MODEL_REPLY_TOO_LARGE);
    expect(failure.message).toContain(`The model reply is ${bytes} bytes, over the limit of ${bytes - 1} bytes`);
    expect(failure.details).toEqual([
      { status: null, providerType: null, providerCode: null, requestId: null, retryAfterMs: null, limitBytes: bytes - 1, receivedBytes: bytes } satisfies ModelFailureDetails,
    ]);
  });

  it('checkReplySize: counts UTF-8 bytes, not characters', () => {
    // 600 characters, 1200 bytes as UTF-8: over a 1000-byte limit though its length is under it.
    const message = text('é'.repeat(600));
    expect(JSON.stringify(message).length).toBeLessThan(1000);
    expect(failureOf(() => checkReplySize(message, 1000)).message).toContain(`is ${size(message)} bytes`);
  });

  it('checkReplySize: tool-call arguments count too', () => {
    const message: AssistantMessage = {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'write', arguments: JSON.stringify({ text: 'y'.repeat(2000) }) } }],
    };
    expect(failureOf(() => checkReplySize(message, 1000)).type).toBe(MODEL_REPLY_TOO_LARGE);
  });
});
