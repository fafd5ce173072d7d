/**
 * What `loopwright chat` prints that does not depend on the terminal: its help, a line for a
 * message that arrives while a turn runs, the lines below a turn's reply, and the arguments of
 * `/budget`. Pure functions, so tests read them without a session.
 */
import type { ChatMessage } from '../../common/messages';
import type { BudgetChange, TurnResult } from '../../common/session-types';
import { turnNotes, turnStatusMessage } from './session-text';

export const CHAT_HELP = [
  'Type a message (a command such as *intake, a number, or free text) and press Enter.',
  '  /stop              interrupt the running turn (also Ctrl-C)',
  '  /status            where the session stands',
  '  /approve [call]    let a waiting tool call run (all waiting calls without a call id)',
  '  /deny [call|-] [reason]  refuse a waiting tool call; the model sees the reason',
  "  /extend [n]        raise the running turn's iteration limit",
  "  /compact           compact the model's view of the conversation now (between turns)",
  '  /budget [turn=N] [session=N] [cost=X]  raise the budgets by these amounts; alone: show them',
  '  /end               end the session and leave',
  '  /help              this list',
  'Ctrl-C at the prompt leaves the chat; the session stays open and `loopwright chat --id <id>` rejoins it.',
].join('\n');

export const BUDGET_USAGE = 'usage: /budget [turn=N] [session=N] [cost=X] (amounts to raise the budgets by)';

/**
 * The amounts of `/budget turn=N session=N cost=X`, or a string saying what is wrong. No argument
 * gives an empty change (show the budgets).
 */
export function parseBudgetArgs(args: readonly string[]): BudgetChange | string {
  const change: BudgetChange = {};
  const keys = { turn: 'turnTokens', session: 'sessionTokens', cost: 'sessionCost' } as const;
  for (const arg of args) {
    const match = /^(turn|session|cost)=(.+)$/.exec(arg);
    if (!match) return `${arg}: ${BUDGET_USAGE}`;
    const key = match[1] as keyof typeof keys;
    const value = Number(match[2]);
    const whole = key !== 'cost';
    if (!Number.isFinite(value) || value <= 0 || (whole && !Number.isInteger(value))) {
      return `${arg}: expected ${whole ? 'a positive whole number of tokens' : 'a cost > 0'}`;
    }
    change[keys[key]] = value;
  }
  return change;
}

/**
 * The lines below a turn's reply: compactions and continuations, then why a turn that did not
 * complete ended (in plain words for a reply cut off, filtered or refused, or a budget reached).
 */
export function turnEndLines(result: Pick<TurnResult, 'status' | 'error' | 'continuations' | 'compactions' | 'modelWarnings'>): string[] {
  const lines = turnNotes(result).map((note) => `  (${note})`);
  const message = turnStatusMessage(result, { chat: true });
  if (message) lines.push(`  ${message}`);
  else if (result.status !== 'completed' && result.status !== 'waiting_for_user') lines.push(`  (turn ${result.status}${result.error ? `: ${result.error}` : ''})`);
  return lines;
}

/**
 * Budget warnings not shown yet (`session tokens 82%`), each budget once: `shown` keeps the
 * budgets already warned about.
 */
export function newBudgetWarnings(warnings: readonly string[] | undefined, shown: Set<string>): string[] {
  const fresh: string[] = [];
  for (const warning of warnings ?? []) {
    const budget = warning.replace(/\s*[\d.]+\s*%\s*$/, '');
    if (shown.has(budget)) continue;
    shown.add(budget);
    fresh.push(`  ! budget: ${warning}`);
  }
  return fresh;
}

/** One line for a message worth showing while a turn runs (tool results, notices). */
export function describeMessage(message: ChatMessage): string | undefined {
  if (message.role === 'system' && message.content.startsWith('[Loopwright]')) return `  ! ${message.content.slice('[Loopwright] '.length)}`;
  if (message.role !== 'tool') return undefined;
  let result: Record<string, unknown> = {};
  try {
    result = JSON.parse(message.content) as Record<string, unknown>;
  } catch {
    return `  · ${message.content.slice(0, 120)}`;
  }
  if (result.success === false) return `  ✗ ${String(result.error ?? 'failed').slice(0, 300)}`;
  const where = typeof result.path === 'string' ? result.path : typeof result.workflow_name === 'string' ? `workflow ${result.workflow_name}` : '';
  const size = typeof result.size === 'number' ? ` (${result.size} bytes)` : '';
  if ('answer' in result) return undefined;
  return `  ✓ ${where}${size}`.trimEnd();
}
