import { buildRequest, isOpenAIServer, tokenParameterFor, type RequestParts } from '../../../activities/model/build-request';
import type { ChatMessage, ToolDefinition } from '../../../common/messages';
import { DEFAULT_MAX_OUTPUT_TOKENS } from '../../../common/model-call';

const MESSAGES: ChatMessage[] = [
  { role: 'system', content: 'sys' },
  { role: 'user', content: 'hi' },
];
const TOOLS: ToolDefinition[] = [{ type: 'function', function: { name: 'read_file', description: 'Read', parameters: { type: 'object' } } }];
const LOCAL = 'http://127.0.0.1:8080/v1';

function body(parts: Partial<RequestParts> = {}): Record<string, unknown> {
  return buildRequest({ model: 'm', messages: MESSAGES, tools: TOOLS, baseURL: LOCAL, ...parts }) as unknown as Record<string, unknown>;
}

describe('buildRequest', () => {
  it('buildRequest: always sends the output limit, max_tokens to a compatible server, the default when nothing is set', () => {
    const sent = body();
    expect(sent.max_tokens).toBe(DEFAULT_MAX_OUTPUT_TOKENS);
    expect('max_completion_tokens' in sent).toBe(false);
  });

  it('buildRequest: settings.maxOutputTokens wins over input.maxTokens, which wins over the default', () => {
    expect(body({ maxTokens: 300, settings: { maxOutputTokens: 700 } }).max_tokens).toBe(700);
    expect(body({ maxTokens: 300 }).max_tokens).toBe(300);
  });

  it('buildRequest: max_completion_tokens to OpenAI itself (no base URL, or api.openai.com) and with reasoning effort', () => {
    for (const baseURL of [undefined, 'https://api.openai.com/v1']) {
      const sent = body({ baseURL, maxTokens: 100 });
      expect(sent.max_completion_tokens).toBe(100);
      expect('max_tokens' in sent).toBe(false);
    }
    const reasoning = body({ settings: { reasoningEffort: 'low', maxOutputTokens: 50 } });
    expect(reasoning.max_completion_tokens).toBe(50);
    expect(reasoning.reasoning_effort).toBe('low');
    expect('max_tokens' in reasoning).toBe(false);
  });

  it('buildRequest: settings.tokenParameter decides over the server and the reasoning effort', () => {
    const forced = body({ baseURL: undefined, settings: { tokenParameter: 'max_tokens', reasoningEffort: 'high', maxOutputTokens: 10 } });
    expect(forced.max_tokens).toBe(10);
    expect('max_completion_tokens' in forced).toBe(false);
    expect(body({ settings: { tokenParameter: 'max_completion_tokens' } }).max_completion_tokens).toBe(DEFAULT_MAX_OUTPUT_TOKENS);
    expect(tokenParameterFor(undefined, LOCAL)).toBe('max_tokens');
  });

  it('buildRequest: temperature from the settings, else the input; tool_choice from the settings, else auto', () => {
    expect(body({ temperature: 0.3 }).temperature).toBe(0.3);
    expect(body({ temperature: 0.3, settings: { temperature: 0.9 } }).temperature).toBe(0.9);
    expect('temperature' in body()).toBe(false);
    expect(body().tool_choice).toBe('auto');
    expect(body({ settings: { toolChoice: 'required' } }).tool_choice).toBe('required');
    expect('reasoning_effort' in body()).toBe(false);
  });

  it('buildRequest: no tools means neither tools nor tool_choice, even when the settings name a choice', () => {
    const sent = body({ tools: [], settings: { toolChoice: 'required' } });
    expect('tools' in sent).toBe(false);
    expect('tool_choice' in sent).toBe(false);
  });

  it('buildRequest: extraBody is merged in but never overrides model, messages, tools or stream', () => {
    const sent = body({
      settings: {
        extraBody: { model: 'evil', messages: [], tools: [], stream: true, top_k: 20, chat_template_kwargs: { enable_thinking: false } },
      },
    });
    expect(sent.model).toBe('m');
    expect(sent.messages).toEqual(MESSAGES);
    expect(sent.tools).toEqual(TOOLS);
    expect('stream' in sent).toBe(false);
    expect(sent.top_k).toBe(20);
    expect(sent.chat_template_kwargs).toEqual({ enable_thinking: false });
  });

  it('buildRequest: response_format is sent when the call asks for one, and extraBody cannot override or add it then', () => {
    const format = { type: 'json_schema' as const, json_schema: { name: 'checklist_result', strict: true, schema: { type: 'object' } } };
    const extraBody = { response_format: { type: 'text' }, top_k: 5 };
    expect(body({ responseFormat: format, settings: { extraBody } })).toMatchObject({ response_format: format, top_k: 5 });
    // null: none sent, and none added by extraBody (a server that refused one is not asked again).
    const none = body({ responseFormat: null, settings: { extraBody } });
    expect('response_format' in none).toBe(false);
    expect(none.top_k).toBe(5);
    // Not set by the call: extraBody may set it, as before.
    expect(body({ settings: { extraBody } }).response_format).toEqual({ type: 'text' });
    expect('response_format' in body()).toBe(false);
  });

  it('isOpenAIServer: only an unset base URL or api.openai.com', () => {
    expect([undefined, 'https://api.openai.com/v1', 'http://localhost:11434/v1', 'https://example.com/openai'].map(isOpenAIServer)).toEqual([true, true, false, false]);
  });
});
