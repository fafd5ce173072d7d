/**
 * The state of one run of a session as its helpers see it (handlers, initialisation, carry-over,
 * verification, delegation): what they read and change. `SessionRun` (session-run.ts) is the one
 * implementation; its fields are changed only by workflow code.
 */
import type { ApplicationFailure, CancellationScope } from '@temporalio/workflow';
import type { InitializeResult, SessionInput, SessionState } from '../../common/session-types';
import type { HashedTranscript } from '../../common/transcript';
import type { SessionActivityStubs } from '../stubs/activity-proxies';
import type { ManagedModel } from '../turn/model-calls';
import type { SessionToolSet } from '../turn/tool-calls';
import type { SessionVerifier } from '../verify/verify';
import type { Delegator } from '../delegation/delegation';
import type { DelegationApprovals } from '../delegation/delegation-approvals';
import type { TurnLimits } from '../turn/turn-limits';

export interface SessionRuntime {
  readonly input: SessionInput;
  readonly state: SessionState;
  /** The append-only transcript. */
  readonly transcript: HashedTranscript;
  readonly activities: SessionActivityStubs;
  /** The running turn's iteration limit, its warning and repeated failures (`extend` raises the limit). */
  readonly limits: TurnLimits;
  /** The agent, tools and runtime context, once initialised. */
  init: Omit<InitializeResult, 'messages'> | undefined;
  /** The tools offered beyond the built-in ones and how to run them (built-in only until listed). */
  toolSet: SessionToolSet;
  /** Context management and budgets, once initialised (sessions recorded before them have none). */
  managed: ManagedModel | undefined;
  /** The verify phase, when on (sessions recorded before it have none). */
  verifier: SessionVerifier | undefined;
  /** Delegation: approvals passed between parent and child sessions (absent in recorded sessions). */
  delegationApprovals?: DelegationApprovals;
  /** Delegation: runs `delegate_task` calls, when the agent has someone to call. */
  delegator?: Delegator;
  /** Initialisation (or the carried transcript) is complete: turns may run. */
  ready: boolean;
  /** A turn (or a compaction) is running. */
  busy: boolean;
  /** The session completes after the current turn. */
  endRequested: boolean;
  /** The running turn's scope, which `interrupt` cancels. */
  currentTurn: CancellationScope | undefined;
  /** Set when this run hands over to the next one; waiting handlers then tell their clients so. */
  continuing: boolean;
  /** The turn carried over from the previous run, until it has finished here. */
  resumingTurn: number | undefined;
  /** The transcript of the run before (or of the branched session) is still paging in. */
  transcriptLoading: boolean;
  /** Show the session's details in the Web UI. */
  refreshDetails(): void;
  /** The failure a handler answers with once the run is moving to the next one. */
  continuedFailure(turn?: number): ApplicationFailure;
}
