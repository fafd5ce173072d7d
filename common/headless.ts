/**
 * Headless runs (`loopwright run --headless`): BMAD's skills have a mode for callers without an
 * interactive user, which ends the run with a JSON status (`status: complete | partial | blocked`,
 * `assumptions`, `open_questions`, and fields of the skill's own). Loopwright asks for that mode in
 * the message it sends, and reads the status back from the agent's answer, so a script gets a
 * verdict it can act on (the turn result's `headless`, and the exit status). Pure code: the batch
 * workflow uses it too.
 */

/** `type` of a headless run whose answer did not end with its JSON status (exit status 1). */
export const HEADLESS_STATUS_MISSING = 'HeadlessStatusMissing';
/** What is said of such a run. */
export const HEADLESS_STATUS_MISSING_TEXT = 'the answer did not end with the JSON status a headless run asks for';

/** The statuses of a headless run, as BMAD's skills define them. */
export const HEADLESS_STATUSES = ['complete', 'partial', 'blocked'] as const;
export type HeadlessStatusName = (typeof HEADLESS_STATUSES)[number];

/** The JSON status a headless run ends with: its status, and whatever else the skill put in it. */
export interface HeadlessStatus {
  status: HeadlessStatusName;
  assumptions?: unknown[];
  open_questions?: unknown[];
  [key: string]: unknown;
}

/** How the message of a headless run opens: the mode, and what the answer must end with. */
export const HEADLESS_PREAMBLE =
  '[headless: true] This run is headless: there is no interactive user. Do not greet and do not ask questions; ' +
  'complete the request with what is given, what exists in the project, and what you can find yourself, recording ' +
  'what you inferred as assumptions and what needs a human decision as open questions. When a skill you use has ' +
  'a headless mode, follow it. End your answer with its JSON status as the last thing in it: ' +
  '{"status": "complete" | "partial" | "blocked", "assumptions": [...], "open_questions": [...]} plus any fields the skill adds ' +
  '(complete: stands on its own; partial: produced, but to be reviewed; blocked: nothing produced, with a "reason").';

/** The message a headless run sends for the user's `message`. */
export function headlessMessage(message: string): string {
  return `${HEADLESS_PREAMBLE}\n\n${message}`;
}

/** Largest answer searched for the status, from its end (a status is short). */
const MAX_SEARCHED_CHARS = 64 * 1024;
/** Most opening braces tried (each try parses up to the end): the search stays bounded on any answer. */
const MAX_TRIED_BRACES = 1000;

/**
 * The JSON status that ends `response`, when there is one: the last JSON object in it (fenced as
 * ```json or bare) whose `status` is one of `HEADLESS_STATUSES`. Undefined when none is found.
 */
export function parseHeadlessStatus(response: string | undefined): HeadlessStatus | undefined {
  if (response === undefined) return undefined;
  const text = response.length > MAX_SEARCHED_CHARS ? response.slice(-MAX_SEARCHED_CHARS) : response;
  const end = text.lastIndexOf('}');
  if (end < 0) return undefined;
  // Try each opening brace from the end backwards: the first that parses to a status is the one.
  let tried = 0;
  for (let start = text.lastIndexOf('{', end); start >= 0 && tried < MAX_TRIED_BRACES; start = text.lastIndexOf('{', start - 1), tried++) {
    const candidate = objectAt(text, start, end);
    if (candidate !== undefined) return candidate;
    if (start === 0) break;
  }
  return undefined;
}

function objectAt(text: string, start: number, end: number): HeadlessStatus | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text.slice(start, end + 1));
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const status = (value as Record<string, unknown>).status;
  return typeof status === 'string' && (HEADLESS_STATUSES as readonly string[]).includes(status) ? (value as HeadlessStatus) : undefined;
}
