/**
 * How the commands word a session's context, compactions, budgets and the turn statuses that are
 * not plain failures (a reply cut off, filtered or refused, a budget reached). Pure functions of
 * the session's types, shared by run, send, status, compact, budget and chat.
 */
import { BUDGET_EXCEEDED, MAX_ITERATIONS_EXCEEDED, REPLY_REFUSED, REPLY_TRUNCATED, TURN_FAILED, VERIFICATION_FAILED } from '../../common/failure-types';
import { itemLine, verificationLine } from '../../common/verify-report';
import type { BudgetState, BudgetUse, CompactionRecord, ContextState, OfferedToolSummary, SessionState, TurnResult, TurnStatus } from '../../common/session-types';
import { EXIT } from '../exit-codes';

/** Statuses of a turn that ended without the whole answer, whatever its `success` says: exit status 1. */
export const INCOMPLETE_STATUSES: ReadonlySet<TurnStatus> = new Set<TurnStatus>(['truncated', 'content_filtered', 'refused', 'budget_exceeded', 'failed_verification']);

/** A whole number with thousands separators: 96,120. */
export function count(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** `n thing` or `n things`. */
function plural(n: number, one: string, many = `${one}s`): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}

/** A cost: at most four decimals, no trailing zeros (0.0412, 1.5, 12). */
export function formatCost(cost: number): string {
  return String(Number(cost.toFixed(cost >= 100 ? 2 : 4)));
}

/** "context compacted: 96,120 → 31,004 tokens, 14 tool results pruned, 40 messages summarised". */
export function formatCompaction(record: CompactionRecord): string {
  const parts = [`context compacted: ${count(record.beforeTokens)} → ${count(record.afterTokens)} tokens`];
  if (record.pruned > 0) parts.push(`${plural(record.pruned, 'tool result')} pruned`);
  if (record.summarized > 0) parts.push(`${plural(record.summarized, 'message')} summarised`);
  if (record.cachedTokensLost !== undefined) parts.push(`${plural(record.cachedTokensLost, 'cached token')} lost`);
  const why = record.reason === 'context_length' ? ' (the server refused the prompt as too long)' : record.reason === 'cache_cold' ? ' (early, while the prompt cache had expired)' : '';
  return `${parts.join(', ')}${why}`;
}

/** "the reply reached the output limit and was continued 2 times". */
export function formatContinuations(continuations: number): string {
  return `the reply reached the output limit and was continued ${continuations === 1 ? 'once' : `${count(continuations)} times`}`;
}

/** Where the context window came from, in words. */
function windowSource(source: string): string {
  if (source === 'session') return 'window set for the session';
  if (source === 'default') return 'default window';
  if (source === 'server error') return 'window learnt from a server error';
  return `window from ${source}`;
}

/** "31,004 / 32,768 tokens (window from server: llama.cpp /props n_ctx), 3 compactions, last: turn 4, 96,120 → 31,004 tokens". */
export function contextLine(context: ContextState): string {
  const parts = [`${count(context.promptTokens)} / ${count(context.window)} tokens (${windowSource(context.windowSource)})`, plural(context.compactions, 'compaction')];
  const last = context.lastCompaction;
  if (last)
    parts.push(
      `last: turn ${last.turn}, ${count(last.beforeTokens)} → ${count(last.afterTokens)} tokens (${last.reason.replace(/_/g, ' ')}${last.cachedTokensLost !== undefined ? `; ${plural(last.cachedTokensLost, 'cached token')} lost` : ''})`,
    );
  return parts.join(', ');
}

/** "45,000 / 200,000 (22%)", or "45,000 (no limit)". */
function use({ used, limit }: BudgetUse, format: (n: number) => string): string {
  if (limit === undefined) return `${format(used)} (no limit)`;
  return `${format(used)} / ${format(limit)} (${limit > 0 ? Math.floor((used / limit) * 100) : 100}%)`;
}

/** One line per budget (turn tokens, session tokens, cost), then a line per warning. */
export function budgetLines(budget: BudgetState): string[] {
  return [
    `turn tokens:    ${use(budget.turnTokens, count)}`,
    `session tokens: ${use(budget.sessionTokens, count)}`,
    `cost:           ${use(budget.cost, formatCost)}`,
    ...(budget.warnings ?? []).map((warning) => `warning:        ${warning}`),
  ];
}

/** The budgets with a limit, short, for one line of `list` (e.g. `session tokens 12,000 / 50,000 (24%)`); empty without limits. */
export function budgetSummary(budget: BudgetState): string {
  const parts: string[] = [];
  if (budget.turnTokens.limit !== undefined) parts.push(`turn tokens ${use(budget.turnTokens, count)}`);
  if (budget.sessionTokens.limit !== undefined) parts.push(`session tokens ${use(budget.sessionTokens, count)}`);
  if (budget.cost.limit !== undefined || budget.cost.used > 0) parts.push(`cost ${use(budget.cost, formatCost)}`);
  return parts.join(', ');
}

/** Where the message is read: the shell (run, send) or chat, for the advice on what to do next. */
export interface TurnStatusContext {
  workflowId?: string;
  chat?: boolean;
}

/**
 * A plain sentence for a turn that ended `truncated`, `content_filtered`, `refused` or
 * `budget_exceeded`, with what to do next; undefined for any other status.
 */
export function turnStatusMessage(result: Pick<TurnResult, 'status' | 'error' | 'continuations'>, where: TurnStatusContext = {}): string | undefined {
  const facts = [result.error, result.continuations ? `continued ${result.continuations === 1 ? 'once' : `${result.continuations} times`}` : undefined].filter(Boolean);
  const detail = facts.length ? ` (${facts.join('; ')})` : '';
  switch (result.status) {
    case 'truncated':
      return `The reply was cut off at the output limit${detail}; raise --max-output-tokens or say "continue"`;
    case 'content_filtered':
      return `The model server's content filter stopped the reply${detail}; rephrase the request or use another model`;
    case 'refused':
      return `The model refused to answer${detail}; rephrase the request or use another model`;
    case 'failed_verification':
      return `The saved document still fails its checklist${detail}; ask the agent to fix the items listed, or check it yourself`;
    case 'budget_exceeded': {
      const raise = where.chat ? '/budget turn=N session=N cost=X' : `loopwright budget ${where.workflowId ?? '<id>'} --turn-tokens N --session-tokens N --cost X`;
      return `A token or cost budget was reached${detail}; the reply is the partial result. Raise the budget with ${raise} and say "continue"`;
    }
    default:
      return undefined;
  }
}

/** Whether a turn counts as failed: not successful, or ended without the whole answer. */
export function turnFailed(result: Pick<TurnResult, 'success' | 'status'>): boolean {
  return !result.success || INCOMPLETE_STATUSES.has(result.status);
}

/** The exit status of run and send for a turn: 1 when it failed. */
export function turnExitCode(result: Pick<TurnResult, 'success' | 'status'>): number {
  return turnFailed(result) ? EXIT.FAILED : EXIT.OK;
}

/** The failure type a failed turn reports with --json (the one a one-shot session fails with). */
export function turnFailureType(status: TurnStatus): string {
  switch (status) {
    case 'max_iterations':
      return MAX_ITERATIONS_EXCEEDED;
    case 'truncated':
      return REPLY_TRUNCATED;
    case 'budget_exceeded':
      return BUDGET_EXCEEDED;
    case 'refused':
    case 'content_filtered':
      return REPLY_REFUSED;
    case 'failed_verification':
      return VERIFICATION_FAILED;
    default:
      return TURN_FAILED;
  }
}

/** The lines a turn's result adds below its reply: compactions, continuations, the model server's mended problems. */
export function turnNotes(result: Pick<TurnResult, 'compactions' | 'continuations' | 'modelWarnings' | 'verification' | 'bundleChanges'>): string[] {
  const verification = result.verification;
  return [
    ...(result.bundleChanges ?? []).map((change) => `changed on disk: ${change}`),
    ...(verification
      ? [
          `verification: ${verificationLine(verification)}`,
          ...verification.items
            .filter((i) => !i.passed)
            .slice(0, 20)
            .map((i) => `failed: ${itemLine(i)}`),
        ]
      : []),
    ...(result.compactions ?? []).map(formatCompaction),
    ...(result.continuations ? [formatContinuations(result.continuations)] : []),
    ...(result.modelWarnings ?? []).map((warning) => `model server: ${warning}`),
  ];
}

/**
 * The context and budget lines of `status` (when the state has them): `context:` with the prompt
 * size, the window and the compactions, then `budget:` and a line per budget.
 */
export function stateDetailLines(state: Pick<SessionState, 'context' | 'budget' | 'verify' | 'lastTurn' | 'waitingForFiles'>): string[] {
  const lines: string[] = [];
  if (state.waitingForFiles) lines.push(`files:      waiting since ${state.waitingForFiles.since} for a worker on host ${state.waitingForFiles.host}, which holds the bundle and project`);
  const pending = state.verify?.pending;
  if (pending)
    lines.push(
      `verify:     ${pending.name ?? 'document'} against ${pending.checklist ?? 'its checklist'}${pending.document ? `, saved ${pending.document}` : ', not saved yet'} (attempt ${pending.attempts} of ${pending.maxAttempts})`,
    );
  if (state.lastTurn?.verification) lines.push(`verified:   ${verificationLine(state.lastTurn.verification)}`);
  if (state.context) lines.push(`context:    ${contextLine(state.context)}`);
  if (state.budget) budgetLines(state.budget).forEach((line, i) => lines.push(`${i === 0 ? 'budget:' : ''}`.padEnd(12) + line));
  return lines;
}

/** "github__create_issue  mcp      write  needs approval  (server github)": one offered tool, its name padded to `width`. */
export function toolLine(tool: OfferedToolSummary, width = 0): string {
  const parts = [tool.name.padEnd(width), tool.kind.padEnd(7), tool.access.padEnd(5)];
  if (tool.approval === 'required') parts.push('needs approval');
  if (tool.server !== undefined) parts.push(`(server ${tool.server})`);
  return parts.join('  ').trimEnd();
}
