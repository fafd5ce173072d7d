/**
 * The scripted model of the engine benchmark. The user message names how many model calls the turn
 * makes and which file to read; the responder answers with a `read_file` call of that file until the
 * turn's last call, which gets a text. It keeps no state (it counts the assistant messages since
 * the last user message), so the durable and the plain loop get exactly the same replies.
 */
import type { ChatMessage } from '../../common/messages';
import { delay, text, toolCalls, type Responder } from '../../fake-model/steps';

/** The user message that asks for a turn of `iterations` model calls reading `filePath` (a tool path). */
export function benchTurnMessage(iterations: number, filePath: string): string {
  return `bench turn: iterations=${iterations} file=${filePath}`;
}

const MESSAGE_PATTERN = /^bench turn: iterations=(\d+) file=(\S+)$/;

/** The responder the fake model server uses for the engine benchmark. */
export const benchResponder: Responder = (request) => {
  const messages: ChatMessage[] = request.body?.messages ?? [];
  const lastUser = findLastIndex(messages, (m) => m.role === 'user');
  const match = lastUser >= 0 ? MESSAGE_PATTERN.exec(String(messages[lastUser]!.content)) : null;
  if (!match) return text('bench responder: no bench turn message found');
  const iterations = Number(match[1]);
  const call = messages.slice(lastUser + 1).filter((m) => m.role === 'assistant').length + 1;
  if (call >= iterations) return text(`done after ${call} model calls`);
  return toolCalls([{ name: 'read_file', arguments: { file_path: match[2]! } }]);
};

/** `benchResponder` answering each request after `ms` milliseconds: a model with that latency per call. */
export function delayedBenchResponder(ms: number): Responder {
  return async (request, index) => delay(ms, await benchResponder(request, index));
}

export function findLastIndex<T>(items: readonly T[], predicate: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (predicate(items[i]!)) return i;
  return -1;
}
