/**
 * The model's reply printed while it is written, on a terminal: `chat` and `run` follow the turn's
 * events (`SessionHandle.follow`) and write each reply's text as it arrives. A reply shown this way
 * is not printed again when the turn ends; a reply that had to start over (its model call was made
 * again) is said to, and printed anew. A running command's output is shown as it comes, each line
 * indented under a bar (`  │ `), through `notice`.
 */
import type { SessionEvent } from '../../client/session-events';

/** What the live printer follows (SessionHandle has it). */
export interface LiveSession {
  follow(options?: { signal?: AbortSignal; turn?: number }): AsyncGenerator<SessionEvent>;
}

/** A running live printer. */
export interface LiveReply {
  /** A reply's line is open on the screen (status lines must wait). */
  readonly writing: boolean;
  /**
   * Whether `text` (a turn's final reply) is on the screen whole, so it need not be printed again:
   * shown already, or begun (the follower was stopped before its end), in which case the rest is
   * written now.
   */
  showed(text: string | null): boolean;
  /** Let the follower see the turn's end (at most `graceMs`), then stop it. */
  stop(graceMs?: number): Promise<void>;
}

/** Starts printing the running (or next) turn's replies to `write`; `before` runs before the first text of a reply (to clear a status line). */
export function startLiveReply(session: LiveSession, io: { write(text: string): void; notice(line: string): void; before(): void }, options: { turn?: number } = {}): LiveReply {
  const abort = new AbortController();
  let writing = false;
  let current = '';
  const shown: string[] = [];
  let ended = false;
  // A command's line not finished yet, by call id: shown once it ends or the call does.
  const partial = new Map<string, string>();
  const outputLines = (id: string, text: string, flush: boolean): void => {
    const lines = `${partial.get(id) ?? ''}${text}`.split('\n');
    const rest = lines.pop() ?? '';
    if (flush && rest !== '') lines.push(rest);
    partial.set(id, flush ? '' : rest);
    if (lines.length === 0) return;
    if (writing) io.write('\n');
    writing = false;
    for (const line of lines) io.notice(`  │ ${line}`);
  };
  const done = (async () => {
    try {
      for await (const event of session.follow({ signal: abort.signal, ...(options.turn !== undefined ? { turn: options.turn } : {}) })) {
        if (event.type === 'text') {
          if (!writing) io.before();
          writing = true;
          current += event.text;
          io.write(event.text);
        } else if (event.type === 'restart') {
          if (writing) io.write('\n');
          writing = false;
          current = '';
          io.notice('  (the model call is being made again: its reply starts over)');
        } else if (event.type === 'reply_done') {
          if (writing) io.write('\n');
          writing = false;
          if (current !== '') shown.push(current);
          current = '';
        } else if (event.type === 'tool_output') {
          outputLines(event.id, event.text, false);
        } else if (event.type === 'tool_finished') {
          if (partial.get(event.id)) outputLines(event.id, '', true);
        } else if (event.type === 'turn_ended') {
          ended = true;
          return;
        }
      }
    } catch {
      // Following is a nicety: the turn's result is printed as before when it fails.
    } finally {
      writing = false;
    }
  })();
  return {
    get writing() {
      return writing;
    },
    showed(text) {
      if (text === null || text === '') return false;
      if (shown.includes(text)) return true;
      // Stopped mid-reply: finish the line from the final text rather than print the reply twice.
      if (current !== '' && text.startsWith(current)) {
        io.write(`${text.slice(current.length)}\n`);
        current = '';
        return true;
      }
      if (current !== '') io.write('\n');
      current = '';
      return false;
    },
    async stop(graceMs = 3000) {
      // The grace timer is cleared once the follower ends first: left running, it would keep the
      // command's process alive for the rest of the grace after its work was done.
      let grace: NodeJS.Timeout | undefined;
      if (!ended) await Promise.race([done, new Promise((resolve) => (grace = setTimeout(resolve, graceMs)))]);
      clearTimeout(grace);
      abort.abort();
      await done;
    },
  };
}
