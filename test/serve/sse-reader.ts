/**
 * Reads a server-sent-events response as it arrives, for the serve tests: each message's `id` and
 * its `data` parsed as JSON (an AG-UI event), with the time it arrived. A plain fetch, no library.
 */
import type { BaseEvent } from '@ag-ui/core';

/** One SSE message. */
export interface SseMessage {
  id?: string;
  event: BaseEvent & Record<string, unknown>;
  at: number;
}

/** An open event stream. */
export interface SseReader {
  status: number;
  messages: SseMessage[];
  /** Resolves when the server ends the stream (or the connection drops). */
  ended: Promise<void>;
  /** Resolves once `test` holds for the messages so far; rejects after `timeoutMs`. */
  waitFor(test: (messages: SseMessage[]) => boolean, timeoutMs?: number, what?: string): Promise<void>;
  /** The id of the last message received. */
  lastId(): string | undefined;
  close(): void;
}

/** Open `url` as an event stream (with `lastEventId` as the Last-Event-ID header when given). */
export async function openEvents(url: string, options: { lastEventId?: string; headers?: Record<string, string> } = {}): Promise<SseReader> {
  const controller = new AbortController();
  const response = await fetch(url, {
    headers: { accept: 'text/event-stream', ...(options.lastEventId ? { 'last-event-id': options.lastEventId } : {}), ...options.headers },
    signal: controller.signal,
  });
  const messages: SseMessage[] = [];
  let wake: () => void = () => undefined;
  const ended = (async () => {
    if (!response.body) return;
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let id: string | undefined;
          let data = '';
          for (const line of block.split('\n')) {
            if (line.startsWith('id: ')) id = line.slice(4);
            else if (line.startsWith('data: ')) data += line.slice(6);
          }
          if (data !== '') messages.push({ ...(id !== undefined ? { id } : {}), event: JSON.parse(data) as SseMessage['event'], at: Date.now() });
        }
        wake();
      }
    } catch {
      // Aborted or dropped: the stream is over for this reader.
    }
    wake();
  })();
  let done = false;
  void ended.then(() => (done = true));
  return {
    status: response.status,
    messages,
    ended,
    async waitFor(test, timeoutMs = 30_000, what = 'the expected events') {
      const deadline = Date.now() + timeoutMs;
      while (!test(messages)) {
        if (done) throw new Error(`the stream ended before ${what}; got ${messages.map((m) => m.event.type).join(' ')}`);
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; got ${messages.map((m) => m.event.type).join(' ')}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 100);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    },
    lastId: () => messages.at(-1)?.id,
    close: () => controller.abort(),
  };
}

/** The text of reply messages as an AG-UI client would build it: deltas per messageId, dropped on loopwright.reply_restarted. */
export function replyTexts(messages: readonly SseMessage[]): Map<string, string> {
  const texts = new Map<string, string>();
  for (const { event } of messages) {
    if (event.type === 'TEXT_MESSAGE_START') texts.set(String(event.messageId), texts.get(String(event.messageId)) ?? '');
    else if (event.type === 'TEXT_MESSAGE_CONTENT') texts.set(String(event.messageId), (texts.get(String(event.messageId)) ?? '') + String(event.delta));
    else if (event.type === 'CUSTOM' && event.name === 'loopwright.reply_restarted') texts.set(String((event.value as { messageId: string }).messageId), '');
  }
  return texts;
}

/** The event types in order. */
export const types = (messages: readonly SseMessage[]): string[] => messages.map((m) => (m.event.type === 'CUSTOM' ? `CUSTOM:${String(m.event.name)}` : m.event.type));
