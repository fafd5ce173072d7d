/**
 * Where each turn begins in a session's transcript, read from the transcript itself: a turn's first
 * message is its user message, or, after a turn that asked a question, the answer (the `ask_question`
 * call's result). No other message of a turn is either, so counting them back from the end finds the
 * turns: the last one begins turn `state.turn`, the one before turn `state.turn - 1`, and so on.
 */
import type { ChatMessage } from '../../common/messages';
import { answerText } from './projector';

/** How many messages one backward read takes. */
const PAGE = 32;

/** Whether message `index` of `messages` (a window of the transcript starting at `offset`) begins a turn. */
export function beginsTurn(messages: readonly ChatMessage[], index: number, offset: number): boolean {
  const message = messages[index - offset];
  if (!message) return false;
  if (message.role === 'user') return true;
  if (message.role !== 'tool' || answerText(message.content) === undefined) return false;
  // The call it answers, when the window holds it, must be a question.
  for (let k = index - offset - 1; k >= 0; k--) {
    const earlier = messages[k]!;
    if (earlier.role !== 'assistant') continue;
    const call = earlier.tool_calls?.find((c) => c.id === message.tool_call_id);
    if (call) return call.function.name === 'ask_question';
  }
  return true;
}

/**
 * Finds turn starts by reading the transcript backwards from `count` (the session's message count
 * when `turn` was its latest turn), remembering what it found.
 */
export class TurnBoundaries {
  /** Start index by turn. */
  private readonly starts = new Map<number, number>();

  /** Record a start seen directly (the message count when the turn before ended). */
  remember(turn: number, start: number): void {
    this.starts.set(turn, start);
  }

  known(turn: number): number | undefined {
    return this.starts.get(turn);
  }

  /**
   * The first message of turn `turn`, given that the session's latest turn is `latest` and its
   * transcript has `count` messages; `read` reads messages `[from, to)`.
   */
  async find(turn: number, latest: number, count: number, read: (from: number, to: number) => Promise<ChatMessage[]>): Promise<number> {
    const known = this.starts.get(turn);
    if (known !== undefined) return known;
    // Walk back from the latest turn, counting turn starts, until `turn` is reached.
    let seen = latest + 1;
    let to = count;
    while (to > 0) {
      const from = Math.max(0, to - PAGE);
      // A little more before the window, so that an answer's question call is in view.
      const windowFrom = Math.max(0, from - 8);
      const window = await read(windowFrom, to);
      for (let index = to - 1; index >= from; index--) {
        if (!beginsTurn(window, index, windowFrom)) continue;
        seen -= 1;
        this.starts.set(seen, index);
        if (seen === turn) return index;
      }
      to = from;
    }
    // Fewer starts than turns (a transcript this reading does not understand): nothing of the past is projected.
    return count;
  }
}
