/**
 * Delegation between agents: a `delegate_task` call starts another agent of the bundle as a child
 * session workflow (one-shot, the task as its first message, the parent's settings) and its final
 * reply becomes the call's result. A `run_subagent` call does the same with an agent made of the
 * instructions it gives (`SessionInput.subagent`), in the same project. The turn calls either like
 * a tool; no activity runs, and several in one reply run at once.
 *
 * Durable and bounded: the child's workflow id is derived from the parent's id, the turn, the
 * iteration and the call id, and its start is a command in the parent's history, so a crash or a
 * replay never starts a second child for a call. The depth travels in the child's input
 * (`delegatedBy.depth`) and a call past `maxDepth`, or past `maxChildren` in one turn, is refused
 * with a result that says so. The child runs in the turn's cancellation scope: interrupting the turn
 * cancels it and the turn waits until it has stopped. Its token usage is added to the turn's usage
 * and budgets. Its pending approvals reach the user through the parent (`delegation-approvals.ts`).
 */
import { ApplicationFailure, CancellationScope, ChildWorkflowCancellationType, executeChild, isCancellation, log, metricMeter, ParentClosePolicy, workflowInfo } from '@temporalio/workflow';
import { DEFAULT_DELEGATION_MAX_CHILDREN, DEFAULT_DELEGATION_MAX_DEPTH, type DelegateAgent, type DelegatedBy, type DelegationResult, type SubagentSpec } from '../../common/delegation-types';
import type { ToolCall, ToolResult } from '../../common/messages';
import type { BudgetSettings, BudgetState, SessionInput, SessionResult, TurnResult } from '../../common/session-types';
import { DELEGATE_TASK, RUN_SUBAGENT } from '../../common/tools';
import { argsOf } from '../../common/tools/tool-spec';
import type { HashedTranscript } from '../../common/transcript';
import { SESSION_WORKFLOW } from '../../common/contract/session-definitions';
import type { DelegationApprovals } from './delegation-approvals';
import { rootMessage } from '../turn/tool-calls';
import type { CallPoint, TurnExtension } from '../turn/extensions';

/** What the delegator needs from its session. */
export interface DelegatorDeps {
  input: SessionInput;
  /** The agents this session's agent may call (from initialisation). */
  delegates: readonly DelegateAgent[];
  /** `run_subagent` is offered: subagents from instructions may be started. */
  subagents?: boolean;
  /** The session's active skills, newest first: a subagent's bare instructions file is looked for in their folders. */
  activeSkills?(): readonly { dir: string }[] | undefined;
  /** The session's budgets now, when it has any. */
  budgets(): BudgetState | undefined;
  /** The model's context window as the session knows it (the child then need not ask the server). */
  contextWindow(): number | undefined;
  /** Where approvals of children are shown and decided. */
  approvals: DelegationApprovals;
}

/** Where in the turn a call is made (its `recordUsage` counts the child's usage in the turn and its budgets). */
export type DelegationCall = CallPoint;

type ChildSession = (input: SessionInput) => Promise<SessionResult>;

export class Delegator {
  readonly maxDepth: number;
  readonly maxChildren: number;
  /** This session's depth: 0 for a session a user started. */
  readonly depth: number;
  private readonly approvals: DelegationApprovals;

  constructor(private readonly deps: DelegatorDeps) {
    const settings = deps.input.delegation;
    this.maxDepth = settings?.maxDepth ?? DEFAULT_DELEGATION_MAX_DEPTH;
    this.maxChildren = settings?.maxChildren ?? DEFAULT_DELEGATION_MAX_CHILDREN;
    this.depth = deps.input.delegatedBy?.depth ?? 0;
    this.approvals = deps.approvals;
  }

  /** Whether `call` is a delegation (the turn runs it here instead of as an activity). */
  handles(call: ToolCall): boolean {
    return call.function.name === DELEGATE_TASK.name || (this.deps.subagents === true && call.function.name === RUN_SUBAGENT.name);
  }

  /** `delegations` for the turn result: the delegate_task calls among the messages [from, to). */
  turnCount(transcript: HashedTranscript, from: number, to: number): { delegations?: number } {
    const n = delegateCallIds(transcript.slice(from, to)).length;
    return n > 0 ? { delegations: n } : {};
  }

  /** Run one `delegate_task` or `run_subagent` call; never throws except for the turn's cancellation. */
  async run(call: ToolCall, at: DelegationCall): Promise<ToolResult> {
    const args = argsOf(call);
    const text = (key: string): string => (typeof args[key] === 'string' ? (args[key] as string).trim() : '');
    const subagent = call.function.name === RUN_SUBAGENT.name ? subagentOf(args) : undefined;
    const asked = subagent ? subagent.name : text('agent');
    const task = text('task');
    const refuse = (error: string): ToolResult => {
      count('refused');
      return result({ success: false, agent: asked, response: null, status: 'refused', error });
    };
    const target = this.targetOf(asked, task, subagent);
    if (typeof target === 'string') return refuse(target);
    const depth = this.depth + 1;
    if (depth > this.maxDepth) {
      return refuse(`Delegation refused: ${target.id} would run at depth ${depth}, past the session's limit of ${this.maxDepth} (delegation.maxDepth); do this task yourself`);
    }
    const ordinal = delegationOrdinal(at.transcript.slice(at.firstIndex), call.id);
    if (ordinal > this.maxChildren) {
      return refuse(`Delegation refused: this turn already made ${this.maxChildren} delegations, its limit (delegation.maxChildren); do the rest yourself or finish the turn`);
    }
    const budget = childBudget(this.deps.input.budget, this.deps.budgets());
    if (typeof budget === 'string') return refuse(`Delegation refused: ${budget}`);
    const info = workflowInfo();
    const workflowId = childWorkflowId(info.workflowId, at.turn, at.iteration, call.id);
    const { input } = this.deps;
    const childInput = this.childInput(task, subagent ?? target.id, { workflowId: info.workflowId, callId: call.id, agent: input.agentId, depth }, budget);
    const window = this.deps.contextWindow();
    if (window !== undefined && input.context?.window === undefined) childInput.context = { ...input.context, window };
    const base = { agent: target.id, workflowId };
    this.approvals.started(workflowId, call.id);
    log.info('Delegating', { agent: target.id, workflowId, depth, turn: at.turn });
    try {
      const done = await executeChild<ChildSession>(SESSION_WORKFLOW, {
        workflowId,
        args: [childInput],
        // The turn's scope: an interrupt cancels the child, and the turn waits until it has stopped.
        cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
        // A parent that ends any other way (terminated, timed out) asks its children to stop too.
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        staticSummary: `${subagent ? `subagent ${target.id}` : target.id} · ${subagent ? 'started' : 'delegated'} by ${input.agentId} · ${task.replace(/\s+/g, ' ').slice(0, 60)}`,
        staticDetails: subagent
          ? `Subagent **${target.id}** (instructions ${subagent.instructionsFile !== undefined ? `from \`${subagent.instructionsFile}\`` : 'given as text'}) in bundle \`${input.bundlePath}\` (one-shot), started by **${input.agentId}** in session \`${info.workflowId}\`, turn ${at.turn}, call ${call.id}; depth ${depth} of ${this.maxDepth}`
          : `Agent **${target.id}** (${target.name}) of bundle \`${input.bundlePath}\` (one-shot), delegated by **${input.agentId}** in session \`${info.workflowId}\`, turn ${at.turn}, call ${call.id}; depth ${depth} of ${this.maxDepth}`,
      });
      const turn = done.lastTurn;
      at.recordUsage(done.usage);
      count(turn?.status ?? 'completed');
      return result({
        ...base,
        success: turn?.success ?? true,
        response: turn?.response ?? null,
        status: turn?.status ?? 'completed',
        usage: done.usage,
        ...(turn?.error ? { error: turn.error } : {}),
      });
    } catch (err) {
      const partial = partialTurn(err);
      if (partial?.usage) at.recordUsage(partial.usage);
      if (isCancellation(err) && CancellationScope.current().consideredCancelled) throw err;
      const status = partial?.status ?? (isCancellation(err) ? 'interrupted' : 'failed');
      count(status);
      log.warn('Delegated session did not complete', { agent: target.id, workflowId, status, error: rootMessage(err) });
      return result({
        ...base,
        success: false,
        response: partial?.response ?? null,
        status,
        ...(partial?.usage ? { usage: partial.usage } : {}),
        error: `${target.id} did not complete: ${rootMessage(err)}`,
      });
    } finally {
      this.approvals.finished(workflowId);
    }
  }

  /** Who a call starts: an agent of the bundle or a subagent, or why none (the text the model reads). */
  private targetOf(asked: string, task: string, subagent: SubagentSpec | undefined): DelegateAgent | string {
    if (subagent) {
      if (task === '' || (subagent.instructions === undefined && subagent.instructionsFile === undefined)) {
        return 'run_subagent needs task (the task, complete) and instructions or instructions_file (who the subagent is and how it works)';
      }
      return { id: subagent.name, name: subagent.name, title: 'subagent' };
    }
    if (asked === '' || task === '') return 'delegate_task needs both agent (an agent id) and task (the task, complete)';
    return this.find(asked) ?? `${asked} is not an agent you may delegate to; you may call: ${this.deps.delegates.map((a) => a.id).join(', ')}`;
  }

  /** The child's input: the parent's settings, but its own agent (or subagent), task, depth and budget. */
  private childInput(task: string, agent: string | SubagentSpec, delegatedBy: DelegatedBy, budget: BudgetSettings | undefined): SessionInput {
    const { input } = this.deps;
    const {
      firstMessage: _first,
      continued: _continued,
      branchFrom: _branch,
      oneShot: _oneShot,
      delegatedBy: _by,
      budget: _budget,
      idleTimeout: _idle,
      agentId: _agent,
      subagent: _sub,
      // A child of an eval session runs live: the recording is its parent's.
      eval: _eval,
      ...shared
    } = input;
    const subagent = typeof agent === 'string' ? undefined : agent;
    const activeSkillDirs = subagent ? (this.deps.activeSkills?.() ?? []).map((s) => s.dir) : [];
    return {
      ...shared,
      // A subagent runs in the same project as its parent, with its parent's agent giving the config.
      agentId: subagent ? input.agentId : (agent as string),
      ...(subagent ? { subagent: { ...subagent, ...(activeSkillDirs.length > 0 ? { activeSkillDirs } : {}) } } : {}),
      firstMessage: task,
      oneShot: true,
      delegatedBy,
      ...(budget ? { budget } : {}),
    };
  }

  /** The callable agent `asked` names: its id, or its id without the module (`pm` for `bmm/pm`), in any case. */
  private find(asked: string): DelegateAgent | undefined {
    const lower = asked.toLowerCase();
    const agents = this.deps.delegates;
    return agents.find((a) => a.id === asked) ?? agents.find((a) => a.id.toLowerCase() === lower) ?? agents.find((a) => a.id.split('/').pop()!.toLowerCase() === lower);
  }
}

function result(r: DelegationResult): ToolResult {
  return { ...r };
}

function count(status: string): void {
  metricMeter.createCounter('loopwright_delegations', 'calls', 'delegate_task calls by outcome').add(1, { status });
}

/** `<parent>-t<turn>-i<iteration>-<call id>`: one child per call, whatever replays or crashes happen. */
export function childWorkflowId(parent: string, turn: number, iteration: number, callId: string): string {
  const safe = callId.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 80);
  return `${parent}-t${turn}-i${iteration}-${safe}`;
}

/** The ids of the delegate_task and run_subagent calls of these messages, in order. */
function delegateCallIds(messages: readonly { role: string; tool_calls?: readonly ToolCall[] }[]): string[] {
  const ids: string[] = [];
  for (const m of messages) {
    if (m.role !== 'assistant') continue;
    for (const c of m.tool_calls ?? []) if (c.function.name === DELEGATE_TASK.name || c.function.name === RUN_SUBAGENT.name) ids.push(c.id);
  }
  return ids;
}

/** The subagent a `run_subagent` call asks for: its name (given, else its file's, else `subagent`) and instructions. */
function subagentOf(args: Record<string, unknown>): SubagentSpec {
  const given = (key: string): string | undefined => (typeof args[key] === 'string' && (args[key] as string).trim() !== '' ? (args[key] as string).trim() : undefined);
  const file = given('instructions_file');
  const instructions = given('instructions');
  const fromFile = file
    ?.split(/[\\/]/)
    .pop()
    ?.replace(/\.[^.]*$/, '');
  const name = (given('name') ?? fromFile ?? 'subagent').replace(/[^A-Za-z0-9_.-]+/g, '-').slice(0, 64) || 'subagent';
  return { name, ...(instructions !== undefined ? { instructions } : {}), ...(file !== undefined ? { instructionsFile: file } : {}) };
}

/** 1 for the turn's first delegation, 2 for the second...: the position of `callId` (its latest use) among the turn's delegate_task calls. */
function delegationOrdinal(messages: readonly { role: string; tool_calls?: readonly ToolCall[] }[], callId: string): number {
  const ids = delegateCallIds(messages);
  return ids.lastIndexOf(callId) + 1;
}

/**
 * The child's budgets: what is left of the parent's. Undefined when the parent has none; a text
 * saying which is used up when nothing is left.
 */
export function childBudget(settings: BudgetSettings | undefined, now: BudgetState | undefined): BudgetSettings | string | undefined {
  if (!settings) return undefined;
  const left = (u: { used: number; limit?: number } | undefined, fallback: number | undefined): number | undefined => (u?.limit !== undefined ? u.limit - u.used : fallback);
  const turn = left(now?.turnTokens, settings.turnTokens);
  const session = left(now?.sessionTokens, settings.sessionTokens);
  const cost = left(now?.cost, settings.sessionCost);
  const tokens = [turn, session].filter((n): n is number => n !== undefined);
  const fewest = tokens.length > 0 ? Math.floor(Math.min(...tokens)) : undefined;
  if (fewest !== undefined && fewest < 1) return 'the token budget is used up';
  if (cost !== undefined && cost <= 0) return 'the cost budget is used up';
  return {
    ...(settings.prices ? { prices: settings.prices } : {}),
    ...(settings.warnAt !== undefined ? { warnAt: settings.warnAt } : {}),
    ...(fewest !== undefined ? { turnTokens: fewest, sessionTokens: fewest } : {}),
    ...(cost !== undefined ? { sessionCost: cost } : {}),
  };
}

/** The child's turn as far as it went, when it failed with one (a one-shot failure carries it in its details). */
function partialTurn(err: unknown): Partial<TurnResult> | undefined {
  let current: unknown = err;
  while (current instanceof Error) {
    if (current instanceof ApplicationFailure && Array.isArray(current.details)) {
      const first = current.details[0] as Partial<TurnResult> | undefined;
      if (first && typeof first === 'object' && typeof first.status === 'string') return first;
    }
    current = current.cause;
  }
  return undefined;
}

/** Delegation as a turn extension: it runs the `delegate_task` calls and counts them in the turn's result. */
export function delegationExtension(delegator: Delegator): TurnExtension {
  return {
    name: 'delegation',
    runsCall: (call) => delegator.handles(call),
    runCall: (call, at) => delegator.run(call, at),
    report: (transcript, from, to) => delegator.turnCount(transcript, from, to),
  };
}
