/**
 * The chain-hashed transcript and the worker's cache of it: hits, inline deltas, syncing by query,
 * full refills, mismatches and eviction, against a page source that counts its calls.
 */
import { ApplicationFailure } from '@temporalio/common';
import { TRANSCRIPT_UNAVAILABLE, TranscriptCache, type TranscriptPageSource } from '../../../activities/transcript/transcript-cache';
import type { ChatMessage } from '../../../common/messages';
import { canonicalMessage, chainHash, EMPTY_TRANSCRIPT_HASH, HashedTranscript, toolMessage, type TranscriptRef } from '../../../common/transcript';

const SESSION = { workflowId: 'wf-1', runId: 'run-1' };

function messages(n: number, size = 10): ChatMessage[] {
  return Array.from({ length: n }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `${i}:${'m'.repeat(size)}` }) as ChatMessage);
}

/** A page source over `source`, like the `transcriptPage` query, counting calls. */
function pages(source: HashedTranscript): TranscriptPageSource & { calls: number } {
  const fn = (async (_ref: unknown, from: number, to: number, maxBytes: number) => {
    fn.calls += 1;
    return source.page(from, maxBytes, to);
  }) as TranscriptPageSource & { calls: number };
  fn.calls = 0;
  return fn;
}

function refOf(t: HashedTranscript, count = t.length): TranscriptRef {
  return { ...SESSION, count, hash: t.hashAt(count) };
}

test('chain hash: depends on every message and their order, not on key order', () => {
  const a: ChatMessage = { role: 'tool', tool_call_id: 'c1', content: 'x' };
  const reordered = JSON.parse('{"content":"x","tool_call_id":"c1","role":"tool"}') as ChatMessage;
  expect(canonicalMessage(a)).toBe(canonicalMessage(reordered));
  const one = chainHash(EMPTY_TRANSCRIPT_HASH, a);
  expect(chainHash(one, { role: 'user', content: 'y' })).not.toBe(chainHash(chainHash(EMPTY_TRANSCRIPT_HASH, { role: 'user', content: 'y' }), a));
  const t = new HashedTranscript(messages(3));
  const u = new HashedTranscript(messages(3));
  expect(t.hashAt()).toBe(u.hashAt());
  u.truncate(2);
  u.push({ role: 'user', content: 'different' });
  expect(u.hashAt()).not.toBe(t.hashAt());
  expect(u.hashAt(2)).toBe(t.hashAt(2));
});

test('page: stops before the byte budget but always returns at least one message', () => {
  const t = new HashedTranscript(messages(10, 100));
  const page = t.page(2, t.bytesBetween(2, 5) + 1);
  expect(page.from).toBe(2);
  expect(page.messages).toHaveLength(3);
  expect(page.hash).toBe(t.hashAt(5));
  expect(t.page(0, 1).messages).toHaveLength(1);
  expect(t.page(8, 10_000, 9).messages).toHaveLength(1);
  expect(t.page(10).messages).toHaveLength(0);
});

test('cache: a first call refills from the session; the next with an inline delta needs no query', async () => {
  const session = new HashedTranscript(messages(5));
  const source = pages(session);
  const cache = new TranscriptCache(source);
  const first = await cache.resolve(refOf(session), undefined);
  expect(first.outcome).toBe('refilled');
  expect(first.transcript.slice()).toEqual(session.slice());
  const reply: ChatMessage = { role: 'assistant', content: 'reply' };
  cache.recordReply(refOf(session), reply);
  session.push(reply, { role: 'user', content: 'next' });
  const before = source.calls;
  const second = await cache.resolve(refOf(session), { from: 6, messages: session.slice(6) });
  expect(second.outcome).toBe('delta');
  expect(source.calls).toBe(before);
  expect(second.transcript.hashAt()).toBe(session.hashAt());
});

test('cache: without a delta the cache syncs only the missing messages by query', async () => {
  const session = new HashedTranscript(messages(4));
  const source = pages(session);
  const cache = new TranscriptCache(source);
  await cache.resolve(refOf(session), undefined);
  session.push(...messages(3, 5000));
  const result = await cache.resolve(refOf(session), undefined);
  expect(result.outcome).toBe('synced');
  expect(result.transcript.slice()).toEqual(session.slice());
});

test('cache: a copy that went astray is replaced by a full refill; a retried call is a hit', async () => {
  const session = new HashedTranscript(messages(4));
  const cache = new TranscriptCache(pages(session));
  await cache.resolve(refOf(session), undefined);
  // The worker recorded a reply the workflow never saw (its call was retried elsewhere).
  cache.recordReply(refOf(session), { role: 'assistant', content: 'lost reply' });
  session.push({ role: 'assistant', content: 'the reply that counted' }, { role: 'user', content: 'more' });
  const result = await cache.resolve(refOf(session), { from: 5, messages: session.slice(5) });
  expect(result.outcome).toBe('refilled');
  expect(result.transcript.slice()).toEqual(session.slice());
  expect((await cache.resolve(refOf(session, 4), undefined)).outcome).toBe('hit');
});

test('cache: tool messages the worker added after the reply (inline reads) make the next call a hit, however large', async () => {
  const session = new HashedTranscript(messages(4));
  const source = pages(session);
  const cache = new TranscriptCache(source);
  await cache.resolve(refOf(session), undefined);
  const reply: ChatMessage = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read_file', arguments: '{}' } }] };
  const result = toolMessage('c1', { success: true, content: 'x'.repeat(20_000) });
  cache.recordReply(refOf(session), reply);
  cache.recordToolMessages(refOf(session), [result]);
  session.push(reply, result);
  const before = source.calls;
  expect((await cache.resolve(refOf(session), undefined)).outcome).toBe('hit');
  expect(source.calls).toBe(before);
});

test('cache: when the session appended something else after the reply, the added tool messages are dropped and the rest synced', async () => {
  const session = new HashedTranscript(messages(4));
  const source = pages(session);
  const cache = new TranscriptCache(source);
  await cache.resolve(refOf(session), undefined);
  const reply: ChatMessage = { role: 'assistant', content: 'reading' };
  cache.recordReply(refOf(session), reply);
  cache.recordToolMessages(refOf(session), [toolMessage('c1', { success: true })]);
  // A budget warning came between the reply and the results.
  session.push(reply, { role: 'system', content: 'budget warning' }, toolMessage('c1', { success: true }));
  const resolved = await cache.resolve(refOf(session), undefined);
  expect(resolved.outcome).toBe('synced');
  expect(resolved.transcript.slice()).toEqual(session.slice());
});

test('cache: a transcript that cannot be made to match fails with a retryable typed failure', async () => {
  const session = new HashedTranscript(messages(3));
  const cache = new TranscriptCache(pages(session));
  const error = await cache.resolve({ ...SESSION, count: 3, hash: 'f'.repeat(32) }, undefined).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(ApplicationFailure);
  expect((error as ApplicationFailure).type).toBe(TRANSCRIPT_UNAVAILABLE);
  expect((error as ApplicationFailure).nonRetryable).toBe(false);
});

test('cache: least recently used sessions are evicted past the byte budget', async () => {
  const a = new HashedTranscript(messages(2, 1000));
  const cache = new TranscriptCache(pages(a), a.bytes * 2 + 10);
  for (const runId of ['r1', 'r2', 'r3']) await cache.resolve({ workflowId: 'wf', runId, count: 2, hash: a.hashAt() }, undefined);
  expect(cache.size).toBe(2);
  expect(cache.bytes).toBeLessThanOrEqual(a.bytes * 2 + 10);
  expect((await cache.resolve({ workflowId: 'wf', runId: 'r3', count: 2, hash: a.hashAt() }, undefined)).outcome).toBe('hit');
  expect((await cache.resolve({ workflowId: 'wf', runId: 'r1', count: 2, hash: a.hashAt() }, undefined)).outcome).toBe('refilled');
});

describe('a transcript with a gap (a run continued from a compacted one)', () => {
  const messages: ChatMessage[] = Array.from({ length: 10 }, (_, i) => ({ role: i === 0 ? 'system' : i % 2 ? 'user' : 'assistant', content: `message ${i}` }) as ChatMessage);
  const whole = new HashedTranscript(messages);

  test('holds the head and the messages after the gap, with the same chain hashes', () => {
    const part = new HashedTranscript();
    part.startWithGap(messages.slice(0, 1), 6, whole.hashAt(6));
    part.push(...messages.slice(6));
    expect(part.length).toBe(10);
    expect(part.hashAt()).toBe(whole.hashAt());
    expect(part.hashAt(1)).toBe(whole.hashAt(1));
    expect(part.gap).toEqual({ from: 1, to: 6, hash: whole.hashAt(6) });
    expect(part.inGap(3)).toBe(true);
    expect(part.inGap(6)).toBe(false);
    expect(() => part.hashAt(3)).toThrow(/not held/);
    expect(part.bytes).toBe(whole.bytes - whole.bytesBetween(1, 6));
    // A page stops where the gap starts; the caller answers for the gap.
    expect(part.page(0).messages).toEqual(messages.slice(0, 1));
    expect(part.page(6).messages).toEqual(messages.slice(6));
    expect(() => part.truncate(4)).toThrow(/not held/);
  });

  test('the cache fills a run with a gap from its head and the messages after it, and checks the hash', async () => {
    const part = new HashedTranscript();
    part.startWithGap(messages.slice(0, 1), 6, whole.hashAt(6));
    part.push(...messages.slice(6));
    const asked: number[] = [];
    const cache = new TranscriptCache(async (_ref, from, to) => {
      asked.push(from);
      // What the session run answers: the head, or the messages from the gap's end.
      return part.page(from, 1_000_000, to);
    });
    const ref = { workflowId: 'w', runId: 'r', count: 10, hash: whole.hashAt(), gap: part.gap! };
    const { transcript, outcome } = await cache.resolve(ref, undefined);
    expect(outcome).toBe('refilled');
    expect(transcript.hashAt()).toBe(whole.hashAt());
    expect(asked).toEqual([0, 6]);
  });
});
