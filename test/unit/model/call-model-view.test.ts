import { ApplicationFailure } from '@temporalio/common';
import { createModelActivities, type ModelActivities } from '../../../activities/model/call-model';
import type { ChatMessage, ToolDefinition } from '../../../common/messages';
import { MODEL_BAD_REQUEST, type ModelCallResult } from '../../../common/model-call';
import type { ModelRefCallInput } from '../../../common/activity-types';
import { estimatePromptTokens } from '../../../common/token-estimate';
import { HashedTranscript } from '../../../common/transcript';
import { completion, fakeClient, mockEnv, rejectionOf, runIn, sessionTranscript, type FakeClient, type RecordedMetrics } from './fake-client';

const TOOLS: ToolDefinition[] = [{ type: 'function', function: { name: 'read_file', description: 'Read', parameters: { type: 'object' } } }];
const TRANSCRIPT: ChatMessage[] = [
  { role: 'system', content: 'Persona.' },
  { role: 'system', content: 'Config.' },
  { role: 'user', content: 'Read the brief.' },
  { role: 'assistant', content: null, reasoning_content: 'I should read it.', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"file_path":"brief.md"}' } }] },
  { role: 'tool', tool_call_id: 'c1', content: '{"success":true,"content":"The brief."}' },
  { role: 'system', content: '[notice] budget at 80%' },
];

function setup(messages: ChatMessage[] = TRANSCRIPT): { fake: FakeClient; activities: ModelActivities; ref: ModelRefCallInput['transcript'] } {
  const fake = fakeClient();
  const session = sessionTranscript(messages);
  const activities = createModelActivities({ baseURL: 'http://127.0.0.1:9/v1', env: {}, clientFactory: () => fake.client, transcriptSource: session.source });
  return { fake, activities, ref: session.ref };
}

describe('callModelV2 with the view, extra messages and settings', () => {
  it('callModelV2: sends the template-safe view with the settings, and records the reply in the transcript copy', async () => {
    const { fake, activities, ref } = setup();
    fake.enqueue(completion({ content: 'Done.' }));
    const result = await runIn(mockEnv(), activities.callModelV2, { transcript: ref, tools: TOOLS, settings: { maxOutputTokens: 256, toolChoice: 'required', temperature: 0.1 } });
    const body = fake.bodies[0]!;
    expect(body.messages).toEqual([
      { role: 'system', content: 'Persona.\n\nConfig.' },
      { role: 'user', content: 'Read the brief.' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{"file_path":"brief.md"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: '{"success":true,"content":"The brief."}\n\n[notice] budget at 80%' },
    ]);
    expect(body).toMatchObject({ max_tokens: 256, tool_choice: 'required', temperature: 0.1 });
    expect(result.estimatedPromptTokens).toBe(estimatePromptTokens(body.messages as ChatMessage[], TOOLS));
    // The reply was appended to the worker's copy: the next call finds the transcript there.
    const next = new HashedTranscript([...TRANSCRIPT, result.message]);
    const { outcome } = await activities.transcripts!.resolve({ ...ref, count: next.length, hash: next.hashAt() }, undefined);
    expect(outcome).toBe('hit');
  });

  it('callModelV2: sendReasoning sends reasoning_content back', async () => {
    const { fake, activities, ref } = setup();
    fake.enqueue(completion({ content: 'ok' }));
    await runIn(mockEnv(), activities.callModelV2, { transcript: ref, tools: TOOLS, settings: { sendReasoning: true } });
    const assistant = (fake.bodies[0]!.messages as ChatMessage[]).find((m) => m.role === 'assistant');
    expect(assistant).toMatchObject({ reasoning_content: 'I should read it.' });
  });

  it('callModelV2: the view sends the summary and prune stubs instead of the old messages', async () => {
    const { fake, activities, ref } = setup([...TRANSCRIPT, { role: 'assistant', content: 'Read it.' }, { role: 'user', content: 'Now save.' }]);
    fake.enqueue(completion({ content: 'ok' }));
    await runIn(mockEnv(), activities.callModelV2, { transcript: ref, tools: TOOLS, view: { head: 2, from: 6, summary: 'They read the brief.', pruneBefore: 0 } });
    const sent = fake.bodies[0]!.messages as ChatMessage[];
    expect(sent).toHaveLength(4);
    expect(sent[1]!.content).toContain('They read the brief.');
    expect(sent.slice(2)).toEqual([
      { role: 'assistant', content: 'Read it.' },
      { role: 'user', content: 'Now save.' },
    ]);
  });

  it('callModelV2: with extra messages they are sent after the view, and the reply is not recorded in the transcript copy', async () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'Write a long doc.' },
    ];
    const { fake, activities, ref } = setup(messages);
    fake.enqueue(completion({ content: 'Part two.' }));
    const extra: ChatMessage[] = [
      { role: 'assistant', content: 'Part one...' },
      { role: 'user', content: 'Continue exactly where you stopped.' },
    ];
    await runIn(mockEnv(), activities.callModelV2, { transcript: ref, tools: [], extra });
    expect((fake.bodies[0]!.messages as ChatMessage[]).slice(-2)).toEqual(extra);
    // Had the reply been recorded, the copy would hold it and the transcript with it would be a hit.
    const withReply = new HashedTranscript([...messages, { role: 'assistant', content: 'Part two.' }]);
    const { transcript } = await activities.transcripts!.resolve({ ...ref, count: withReply.length, hash: withReply.hashAt() }, undefined).catch(() => ({ transcript: undefined }));
    expect(transcript).toBeUndefined();
    expect(activities.transcripts!.stats.hit).toBe(0);
  });

  it('callModel: sanitised usage, warnings and the refusal flag reach the result; fixes are counted', async () => {
    const fake = fakeClient();
    const { callModel } = createModelActivities({ baseURL: 'http://127.0.0.1:9/v1', env: {}, clientFactory: () => fake.client });
    fake.enqueue(completion({ content: null, refusal: 'No.' }, { usage: { prompt_tokens: 10.5, completion_tokens: 'NaN', total_tokens: 1e19 } }));
    const metrics: RecordedMetrics = new Map();
    const result: ModelCallResult = await runIn(mockEnv(undefined, metrics), callModel, { messages: TRANSCRIPT.slice(0, 3), tools: [] });
    expect(result.refusal).toBe(true);
    expect(result.message.content).toBe('No.');
    expect(result.usage!.promptTokens).toBe(11);
    expect(Number.isInteger(result.usage!.completionTokens)).toBe(true);
    expect(result.usage!.totalTokens).toBe(11 + result.usage!.completionTokens);
    expect(result.warnings).toHaveLength(3);
    expect(metrics.get('loopwright_model_usage_fixed')).toEqual([3]);
    expect(metrics.get('loopwright_model_tokens_in')).toEqual([11]);
  });

  it('callModel: an invalid setting is a non-retryable bad request, without a request', async () => {
    const fake = fakeClient();
    const { callModel } = createModelActivities({ baseURL: 'http://127.0.0.1:9/v1', env: {}, clientFactory: () => fake.client });
    const failure = await rejectionOf(runIn(mockEnv(), callModel, { messages: TRANSCRIPT, tools: [], settings: { maxOutputTokens: -5 } }));
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect((failure as ApplicationFailure).type).toBe(MODEL_BAD_REQUEST);
    expect((failure as ApplicationFailure).message).toContain('settings.maxOutputTokens');
    expect(fake.bodies).toHaveLength(0);
  });
});
