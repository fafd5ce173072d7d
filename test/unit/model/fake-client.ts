/**
 * Test helpers of the model activities: a fake openai client (through `clientFactory`) that records
 * every request body and answers from a script, a transcript source over an in-memory transcript,
 * and a mock activity environment.
 */
import type { MetricMeter } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger, type LogEntry } from '@temporalio/worker';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import type { ChatCompletionsClient } from '../../../activities/model/call-model';
import type { TranscriptPageSource } from '../../../activities/transcript/transcript-cache';
import type { ChatMessage } from '../../../common/messages';
import { HashedTranscript, type TranscriptRef } from '../../../common/transcript';

/** A request the fake client received. */
export type SentBody = ChatCompletionCreateParamsNonStreaming & Record<string, unknown>;

/** What the fake client does with one request: a reply body, or an error to throw. */
export type Answer = unknown;

export interface FakeClient {
  client: ChatCompletionsClient;
  bodies: SentBody[];
  /** Queue answers (an Error instance is thrown). */
  enqueue(...answers: Answer[]): void;
}

export function fakeClient(): FakeClient {
  const bodies: SentBody[] = [];
  const queue: Answer[] = [];
  const client: ChatCompletionsClient = {
    chat: {
      completions: {
        create: async (body) => {
          // A deep copy: what was sent, not an object the activity might change later.
          bodies.push(JSON.parse(JSON.stringify(body)) as SentBody);
          const answer = queue.shift();
          if (answer === undefined) throw new Error('fake client: no answer queued');
          if (answer instanceof Error) throw answer;
          return answer;
        },
      },
    },
  };
  return { client, bodies, enqueue: (...answers) => queue.push(...answers) };
}

/** A chat-completion reply body with one choice. */
export function completion(message: Record<string, unknown>, extra: Record<string, unknown> = {}): unknown {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    model: 'served-model',
    choices: [{ index: 0, message: { role: 'assistant', content: null, ...message }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    ...extra,
  };
}

/** Metric values recorded through `recordingMeter`: name -> every value added or recorded. */
export type RecordedMetrics = Map<string, number[]>;

/** A metric meter that remembers what was recorded. */
export function recordingMeter(metrics: RecordedMetrics): MetricMeter {
  const instrument = (name: string): { add: (v: number) => void; record: (v: number) => void; set: (v: number) => void; withTags: () => unknown } => {
    const push = (value: number): void => {
      metrics.set(name, [...(metrics.get(name) ?? []), value]);
    };
    const self = { add: push, record: push, set: push, withTags: () => self };
    return self;
  };
  const meter = {
    createCounter: (name: string) => instrument(name),
    createHistogram: (name: string) => instrument(name),
    createGauge: (name: string) => instrument(name),
    withTags: () => meter,
  };
  return meter as unknown as MetricMeter;
}

/** A mock activity environment; log lines go to `logs` and metrics to `metrics` when given. */
export function mockEnv(logs?: LogEntry[], metrics?: RecordedMetrics): MockActivityEnvironment {
  return new MockActivityEnvironment({}, { logger: new DefaultLogger('TRACE', (entry) => logs?.push(entry)), ...(metrics ? { metricMeter: recordingMeter(metrics) } : {}) });
}

/** Run an activity in `env` (MockActivityEnvironment.run infers unknown). */
export function runIn<I, O>(env: MockActivityEnvironment, fn: (input: I) => Promise<O>, input: I): Promise<O> {
  return env.run(fn, input) as Promise<O>;
}

/** A session's transcript the worker can read through the transcriptPage source, and a reference to it. */
export function sessionTranscript(messages: ChatMessage[]): { source: TranscriptPageSource; ref: TranscriptRef; transcript: HashedTranscript; pages: number[] } {
  const transcript = new HashedTranscript(messages);
  const pages: number[] = [];
  const source: TranscriptPageSource = async (_ref, from, to, maxBytes) => {
    pages.push(from);
    return transcript.page(from, maxBytes, to);
  };
  return { source, ref: { workflowId: 'wf-1', runId: 'run-1', count: transcript.length, hash: transcript.hashAt() }, transcript, pages };
}

/** The failure a promise rejects with. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
}
