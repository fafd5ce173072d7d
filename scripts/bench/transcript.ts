/**
 * A session's whole transcript, page by page. The `messages` query may one day answer in pages
 * (`messages(from)` returning the next slice), so the bench never assumes one call returns it all:
 * it asks from the next index until a page comes back empty.
 */
import type { ChatMessage } from '../../common/messages';

/** Fetches the messages from index `from` on (possibly only some of them). */
export type MessagePage = (from: number) => Promise<ChatMessage[]>;

/** Most pages read before giving up: a query that never answers empty would otherwise loop forever. */
export const MAX_TRANSCRIPT_PAGES = 10_000;

/** Read every message by calling `page(from)` until it returns an empty page. */
export async function readTranscript(page: MessagePage, maxPages = MAX_TRANSCRIPT_PAGES): Promise<ChatMessage[]> {
  const messages: ChatMessage[] = [];
  for (let pages = 0; pages < maxPages; pages++) {
    const next = await page(messages.length);
    if (!Array.isArray(next)) throw new Error(`messages(${messages.length}) returned ${typeof next}, not a list`);
    if (next.length === 0) return messages;
    messages.push(...next);
  }
  throw new Error(`transcript still not complete after ${maxPages} pages (${messages.length} messages)`);
}

/** UTF-8 bytes of the transcript as JSON (the list of messages as the query returns them). */
export function transcriptBytes(messages: readonly ChatMessage[]): number {
  return Buffer.byteLength(JSON.stringify(messages), 'utf8');
}
