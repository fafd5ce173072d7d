/**
 * The verify phase: after the agent has saved a document that a workflow's checklist checks, a
 * model call (the `verifyDocument` activity) reads the checklist and the document and answers item
 * by item. The workflow decides from these recorded results what is verified and how many attempts
 * remain; the worker only reads files and asks the model. Plain data and constants only.
 */
import type { RuntimeContext } from './runtime-context';
import type { ModelSettings } from './model-call';
import type { TokenUsage } from './messages';

// Declared in the settings table (common/settings/session-settings.ts), with its doc text.
export type { VerifySettings } from './settings/session-settings';

/** The `patched` marker of the verify phase (sessions recorded before it never verify). */
export const VERIFY_PATCH = 'loopwright-verify';

// Kept with the other defaults (the settings table reads it there).
export { DEFAULT_VERIFY_ATTEMPTS } from './defaults';

/** Most items of one checklist the activity sends the model and reports (longer ones are cut, with a warning). */
export const MAX_CHECKLIST_ITEMS = 200;

/** Items a report keeps in history and shows (the counts cover all of them). */
export const MAX_REPORTED_ITEMS = 200;

/** Longest note of one item, in characters. */
export const MAX_ITEM_NOTE_CHARS = 500;

/**
 * What to check. Paths are as the session knows them: absolute (the workflow loader resolved them)
 * or with session variables (`{output_folder}/PRD.md`, from a menu item). The activity fills in what
 * is missing from `workflow`: its `validation` (the checklist) and its `default_output_file`.
 */
export interface VerifyTarget {
  /** The checklist file (markdown: `- [ ]` items under headings). */
  checklist?: string;
  /** The document the checklist checks. */
  document?: string;
  /** The workflow.yaml whose `validation` and `default_output_file` stand in for a missing checklist or document. */
  workflow?: string;
  /** Name shown in reports (the workflow's name or the menu command). */
  name?: string;
  /** `workflow`: after a workflow saved its document; `command`: a `validate-workflow` menu item run on demand. */
  source: 'workflow' | 'command';
}

/** Input of the `verifyDocument` activity. */
export interface VerifyInput {
  target: VerifyTarget;
  /** The session's runtime context: roots, variables, secret-file rules, read limit. */
  context: RuntimeContext;
  model?: string;
  settings?: ModelSettings;
  /** 1-based attempt, for logs and spans. */
  attempt: number;
}

/** One checklist item, as the verifier judged it. */
export interface ChecklistItemResult {
  /** The item's text as written in the checklist (without the `- [ ]`). */
  item: string;
  /** The heading the item sits under, when there is one. */
  section?: string;
  passed: boolean;
  /** Why it failed (or what shows it passed), in a sentence; at most MAX_ITEM_NOTE_CHARS. */
  note?: string;
}

/**
 * Result of `verifyDocument`. A checklist or document that cannot be read (missing, outside the
 * roots, a secret file) is not a failure of the activity: `problem` says what, and `items` is empty.
 */
export interface VerifyResult {
  /** The checklist and document read (real paths), when found. */
  checklist?: string;
  document?: string;
  items: ChecklistItemResult[];
  passed: number;
  failed: number;
  /** Why nothing could be checked (no checklist, no document, unreadable file). */
  problem?: string;
  usage: TokenUsage | null;
  warnings?: string[];
  durationMs: number;
}

/** How a turn's verification ended. */
export type VerificationStatus = 'verified' | 'failed_verification' | 'not_verified';

/** The report a turn carries when it verified (or tried to verify) a document. */
export interface VerificationReport {
  status: VerificationStatus;
  name?: string;
  checklist?: string;
  document?: string;
  /** Verify calls made in this turn for this document. */
  attempts: number;
  maxAttempts: number;
  /** Counts of the last attempt. */
  passed: number;
  failed: number;
  /** The last attempt's items (at most MAX_REPORTED_ITEMS). */
  items: ChecklistItemResult[];
  /** `not_verified`: why (nothing readable, the verify call failed). */
  reason?: string;
  /** How it was asked for. */
  source: VerifyTarget['source'];
}

/** A menu item that names a checklist: a `validate-workflow` item (checked on demand), or a workflow item with `checklist`. */
export interface CommandCheck {
  /** The command as the menu shows it (`*validate-prd`). */
  cmd: string;
  /** `validate`: the item checks a document when chosen; `workflow`: the item runs a workflow whose document this checklist checks once saved. */
  kind: 'validate' | 'workflow';
  /** Its targets as written (variables unresolved). */
  workflow?: string;
  checklist?: string;
  document?: string;
}

/** The document a session is waiting to verify: a workflow with a checklist ran, and its document is (to be) saved. */
export interface PendingVerify {
  target: VerifyTarget;
  /** The workflow's `default_output_file` as resolved (it may still hold `{{placeholders}}`); a save must match it. */
  expected?: string;
  /** Saved since the last verification (the real path written). */
  saved?: string;
  /** Verifications made in the current cycle. */
  attempts: number;
  /** The last verification of this cycle, when there was one. */
  last?: VerificationReport;
}

/** What a run hands the next one about verification. */
export interface VerifyCarry {
  pending?: PendingVerify;
  /** The report the running turn will end with, when the turn goes on in the next run. */
  report?: VerificationReport;
}
