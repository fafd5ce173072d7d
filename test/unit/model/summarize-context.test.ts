import { ApplicationFailure } from '@temporalio/common';
import { APIError } from 'openai';
import { createModelActivities, type ModelActivities } from '../../../activities/model/call-model';
import { renderForSummary, SUMMARY_TOOL_RESULT_CHARS, summarizedPart } from '../../../activities/model/summarize-context';
import type { ChatMessage } from '../../../common/messages';
import { MODEL_BAD_REQUEST, MODEL_BAD_RESPONSE, MODEL_RATE_LIMITED, type SummarizeInput, type SummarizeResult } from '../../../common/model-call';
import { SUMMARY_PROMPT_MARKER, type ModelView } from '../../../common/model-view';
import { completion, fakeClient, mockEnv, rejectionOf, runIn, sessionTranscript, type FakeClient } from './fake-client';

const BIG = JSON.stringify({ success: true, content: 'B'.repeat(5000) });
const TRANSCRIPT: ChatMessage[] = [
  { role: 'system', content: 'Persona.' },
  { role: 'user', content: 'Please write the brief for project Falcon.' },
  {
    role: 'assistant',
    content: 'Reading the template.',
    tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ file_path: 'tpl.md', pad: 'p'.repeat(900) }) } }],
  },
  { role: 'tool', tool_call_id: 'c1', content: BIG },
  { role: 'assistant', content: 'The template has five sections.' },
  { role: 'user', content: 'Good, go on.' },
  { role: 'assistant', content: 'Writing section one.' },
];
const VIEW: ModelView = { head: 1, from: 1, pruneBefore: 0 };

function setup(): { fake: FakeClient; activities: ModelActivities; input: SummarizeInput } {
  const fake = fakeClient();
  const session = sessionTranscript(TRANSCRIPT);
  const activities = createModelActivities({ baseURL: 'http://127.0.0.1:9/v1', env: {}, clientFactory: () => fake.client, transcriptSource: session.source, defaultModel: 'local' });
  return { fake, activities, input: { transcript: session.ref, view: VIEW, upTo: 5, maxSummaryTokens: 300 } };
}

describe('summarizeContext', () => {
  it('summarizeContext: one request without tools, the marker first in the system message, the summary limit, the rendered part', async () => {
    const { fake, activities, input } = setup();
    fake.enqueue(completion({ content: '  The user wants a brief for Falcon; the template has five sections.  ' }, { usage: { prompt_tokens: 900, completion_tokens: 20, total_tokens: 920 } }));
    const result: SummarizeResult = await runIn(mockEnv(), activities.summarizeContext, { ...input, settings: { temperature: 0.2, toolChoice: 'required', extraBody: { top_k: 5 } } });
    expect(result.summary).toBe('The user wants a brief for Falcon; the template has five sections.');
    expect(result.usage).toEqual({ promptTokens: 900, completionTokens: 20, totalTokens: 920 });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);

    expect(fake.bodies).toHaveLength(1);
    const body = fake.bodies[0]!;
    expect('tools' in body).toBe(false);
    expect('tool_choice' in body).toBe(false);
    expect(body).toMatchObject({ model: 'local', max_tokens: 300, temperature: 0.2, top_k: 5 });
    const [system, user] = body.messages as ChatMessage[];
    expect(body.messages).toHaveLength(2);
    expect(system!.role).toBe('system');
    expect((system!.content ?? '').startsWith(SUMMARY_PROMPT_MARKER)).toBe(true);
    expect(system!.content).toContain('files read and written');
    expect(user!.role).toBe('user');
    // Messages [1, 5): not the system prompt (head), not what comes after upTo.
    expect(user!.content).toContain('User:\nPlease write the brief for project Falcon.');
    expect(user!.content).toContain('The template has five sections.');
    expect(user!.content).not.toContain('Persona.');
    expect(user!.content).not.toContain('Good, go on.');
    // The tool result is cut, with its full size; the arguments are cut too.
    expect(user!.content).toContain(`Tool result of read_file:\n${BIG.slice(0, SUMMARY_TOOL_RESULT_CHARS)}... [cut: ${BIG.length} characters in full]`);
    expect(user!.content).not.toContain('B'.repeat(SUMMARY_TOOL_RESULT_CHARS + 1));
    expect(user!.content).toMatch(/Tool call: read_file\(\{"file_path":"tpl\.md","pad":"p+\.\.\. \[cut: \d+ characters in full\]\)/);
  });

  it('summarizeContext: the earlier summary comes first, and messages before view.from are left out', async () => {
    const { fake, activities, input } = setup();
    fake.enqueue(completion({ content: 'New summary.' }));
    await runIn(mockEnv(), activities.summarizeContext, { ...input, view: { head: 1, from: 4, summary: 'EARLIER: the user asked for a Falcon brief.', pruneBefore: 0 }, upTo: 6 });
    const user = (fake.bodies[0]!.messages as ChatMessage[])[1]!.content ?? '';
    expect(user.startsWith('Summary of the conversation before this part:\nEARLIER: the user asked for a Falcon brief.')).toBe(true);
    expect(user).not.toContain('Please write the brief');
    expect(user).toContain('Good, go on.');
  });

  it('summarizeContext: an empty summary is a retryable ModelBadResponse', async () => {
    const { fake, activities, input } = setup();
    fake.enqueue(completion({ content: '   ' }));
    const failure = await rejectionOf(runIn(mockEnv(), activities.summarizeContext, input));
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect((failure as ApplicationFailure).type).toBe(MODEL_BAD_RESPONSE);
    expect((failure as ApplicationFailure).nonRetryable).toBe(false);
  });

  it('summarizeContext: a summary cut off at the limit is kept, with a warning', async () => {
    const { fake, activities, input } = setup();
    const reply = completion({ content: 'The user wants' }) as { choices: { finish_reason: string }[] };
    reply.choices[0]!.finish_reason = 'length';
    fake.enqueue(reply);
    const result = await runIn(mockEnv(), activities.summarizeContext, input);
    expect(result.summary).toBe('The user wants');
    expect(result.warnings!.some((w) => w.includes('cut off at 300 tokens'))).toBe(true);
  });

  it('summarizeContext: server errors go through the model-call classification (a 429 is retryable)', async () => {
    const { fake, activities, input } = setup();
    fake.enqueue(APIError.generate(429, { error: { message: 'slow down' } }, undefined, new Headers({ 'retry-after': '2' })));
    const failure = (await rejectionOf(runIn(mockEnv(), activities.summarizeContext, input))) as ApplicationFailure;
    expect(failure.type).toBe(MODEL_RATE_LIMITED);
    expect(failure.nonRetryable).toBe(false);
    expect(failure.nextRetryDelay).toBe(2000);
  });

  it('summarizeContext: the reply is not recorded in the transcript copy, and a bad upTo is a non-retryable bad request', async () => {
    const { fake, activities, input } = setup();
    fake.enqueue(completion({ content: 'Summary.' }));
    await runIn(mockEnv(), activities.summarizeContext, input);
    // The copy still holds exactly the transcript: the same reference is a hit.
    const { outcome, transcript } = await activities.transcripts!.resolve(input.transcript, undefined);
    expect(outcome).toBe('hit');
    expect(transcript.length).toBe(TRANSCRIPT.length);
    const failure = (await rejectionOf(runIn(mockEnv(), activities.summarizeContext, { ...input, upTo: 99 }))) as ApplicationFailure;
    expect(failure.type).toBe(MODEL_BAD_REQUEST);
    expect(failure.nonRetryable).toBe(true);
    expect(fake.bodies).toHaveLength(1);
  });
});

describe('summarizedPart and renderForSummary', () => {
  it('summarizedPart: prune stubs and omitted ranges apply as the model saw them', () => {
    const part = summarizedPart(TRANSCRIPT.slice(0, 6), { head: 1, from: 1, pruneBefore: 4, omit: [{ from: 4, to: 5 }] });
    expect(part.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user']);
    expect(part[2]!.content).toContain('"pruned":true');
    expect(renderForSummary(part, undefined)).not.toContain('BBBB');
  });
});
