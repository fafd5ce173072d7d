import { templateSafeMessages } from '../../../activities/model/template-safety';
import type { ChatMessage } from '../../../common/messages';

const CALL = { id: 'c1', type: 'function' as const, function: { name: 'read_file', arguments: '{"file_path":"a.md"}' } };

describe('templateSafeMessages', () => {
  it('templateSafeMessages: leading system messages become one, joined by a blank line', () => {
    const out = templateSafeMessages([
      { role: 'system', content: 'Persona.' },
      { role: 'system', content: 'Config loaded.' },
      { role: 'system', content: 'Rules.' },
      { role: 'user', content: 'hi' },
    ]);
    expect(out).toEqual([
      { role: 'system', content: 'Persona.\n\nConfig loaded.\n\nRules.' },
      { role: 'user', content: 'hi' },
    ]);
  });

  it('templateSafeMessages: a later system notice is folded into the previous tool message', () => {
    const out = templateSafeMessages([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'read it' },
      { role: 'assistant', content: null, tool_calls: [CALL] },
      { role: 'tool', tool_call_id: 'c1', content: '{"success":true}' },
      { role: 'system', content: '[notice] 3 iterations left' },
    ]);
    expect(out).toHaveLength(4);
    expect(out[3]).toEqual({ role: 'tool', tool_call_id: 'c1', content: '{"success":true}\n\n[notice] 3 iterations left' });
    expect(out.filter((m) => m.role === 'system')).toHaveLength(1);
  });

  it('templateSafeMessages: a notice after a user message is appended to it', () => {
    const out = templateSafeMessages([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'hello' },
      { role: 'system', content: 'notice' },
    ]);
    expect(out).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'hello\n\nnotice' },
    ]);
  });

  it('templateSafeMessages: a notice after an assistant message becomes a user message, merged with a user message after it', () => {
    const out = templateSafeMessages([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'a' },
      { role: 'system', content: 'budget warning' },
      { role: 'user', content: 'next question' },
    ]);
    expect(out).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'a' },
      { role: 'user', content: 'budget warning\n\nnext question' },
    ]);
  });

  it('templateSafeMessages: consecutive user messages are merged into one', () => {
    const out = templateSafeMessages([
      { role: 'user', content: 'one' },
      { role: 'user', content: 'two' },
      { role: 'user', content: 'three' },
    ]);
    expect(out).toEqual([{ role: 'user', content: 'one\n\ntwo\n\nthree' }]);
  });

  it('templateSafeMessages: reasoning_content is dropped unless sendReasoning; no fields beyond the wire shape', () => {
    const assistant = { role: 'assistant', content: 'answer', reasoning_content: 'thinking...', tool_calls: [{ ...CALL, index: 0 }], extra: 1 } as unknown as ChatMessage;
    const messages: ChatMessage[] = [{ role: 'user', content: 'q' }, assistant];
    const stripped = templateSafeMessages(messages);
    expect(stripped[1]).toEqual({ role: 'assistant', content: 'answer', tool_calls: [CALL] });
    const kept = templateSafeMessages(messages, { sendReasoning: true });
    expect(kept[1]).toEqual({ role: 'assistant', content: 'answer', tool_calls: [CALL], reasoning_content: 'thinking...' });
  });

  it('templateSafeMessages: never modifies its input', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'a' },
      { role: 'system', content: 'b' },
      { role: 'user', content: 'u' },
      { role: 'system', content: 'n' },
      { role: 'assistant', content: 'x', reasoning_content: 'r' },
    ];
    const copy = JSON.parse(JSON.stringify(messages)) as ChatMessage[];
    templateSafeMessages(messages);
    expect(messages).toEqual(copy);
  });
});
