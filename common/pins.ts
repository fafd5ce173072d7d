/**
 * Bundle pinning: a session records a content hash of its agent's files when it starts and of
 * each skill when it activates it; at the start of each later turn a small activity hashes them
 * again, and what changed is said (a warning in the turn's result, the session's warnings and the
 * Web UI). The session keeps what it loaded: its agent as it started, a skill as activated, until
 * the model activates the skill again. Pure data: the workflow imports it.
 */

/** What a session's agent was started from: its files (absolute) and their content hash. */
export interface AgentPin {
  /** The agent as asked for (`bmm/bmad-agent-pm`), for the message. */
  id: string;
  files: string[];
  hash: string;
}

/** Input of the `checkPins` activity. */
export interface CheckPinsInput {
  agent?: AgentPin;
  /** The active skills with the hash of their activation. */
  skills: { name: string; dir: string; hash?: string }[];
  projectRoot: string;
}

/** What changed, one line each for the user (empty when nothing did). */
export interface CheckPinsResult {
  changed: string[];
}
