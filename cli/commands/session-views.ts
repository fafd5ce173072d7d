/**
 * `loopwright status | tools | list | transcript`: read where sessions stand, what they offer their
 * model and what they said. Each
 * command receives its arguments and options parsed (cli/cli-session-commands.ts defines them)
 * and resolves to its exit status.
 */
import type { ChatMessage } from '../../common/messages';
import type { SessionState } from '../../common/session-types';
import { EXIT } from '../exit-codes';
import { withWorker } from '../in-process-worker';
import type { CommandOutput } from '../output';
import { openTemporal } from '../temporal-session';
import { type JsonOption, webUiLink, withSession, workerNotice } from './command-support';
import { budgetSummary, stateDetailLines, toolLine } from './session-text';
import { approvalLines } from './approval-text';

/** `loopwright transcript <id> [--json] [--from N]`: the whole conversation, across the session's runs. */
export async function transcriptCommand(workflowId: string, options: JsonOption & { from?: number }, out: CommandOutput): Promise<number> {
  const json = options.json === true;
  const from = options.from ?? 0;
  return withSession(out, async (temporal) => {
    const session = temporal.loopwright.session(workflowId);
    // Queries are answered by a worker (a closed session's by replaying it); run one if none polls.
    const [messages, state] = await withWorker(temporal, { startIfSlow: true, onStart: workerNotice(out, json) }, async () => [await session.messages(from), await session.state()] as const);
    if (json) {
      out.log(JSON.stringify({ workflowId, runs: state.run, turns: state.turn, from, messages }));
      return EXIT.OK;
    }
    out.log(`Session ${workflowId}: ${messages.length} message(s), ${state.turn} turn(s), ${state.run} run(s)`);
    messages.forEach((message, i) => out.log(formatMessage(from + i, message)));
    return EXIT.OK;
  });
}

/** One message for reading in a terminal: index, role, and its text (tool results cut short). */
function formatMessage(index: number, message: ChatMessage): string {
  const head = `[${index}] ${message.role}`;
  switch (message.role) {
    case 'assistant': {
      const calls = (message.tool_calls ?? []).map((c) => `${c.function.name} ${truncate(c.function.arguments, 200)}`);
      return [`${head}: ${message.content ?? ''}`.trimEnd(), ...calls.map((c) => `    → ${c}`)].join('\n');
    }
    case 'tool':
      return `${head} (${message.tool_call_id}): ${truncate(message.content, 300)}`;
    case 'system':
      return `${head}: ${truncate(message.content, 300)}`;
    default:
      return `${head}: ${message.content}`;
  }
}

function truncate(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit)}… (${text.length} chars)`;
}

/** Options of `loopwright list`. */
export interface ListOptions extends JsonOption {
  agent?: string;
  status?: string;
  /** At most this many sessions (default 50). */
  limit?: number;
}

/** `loopwright list [--agent A] [--status S] [--limit N] [--json]`: sessions found by their search attributes. */
export async function listCommand(options: ListOptions, out: CommandOutput): Promise<number> {
  const json = options.json === true;
  return withSession(out, async (temporal) => {
    if (!(await temporal.loopwright.hasSearchAttributes())) {
      const message =
        `The namespace ${temporal.namespace} has no Loopwright search attributes; register them once (see docs/guides/observability.md), e.g. ` +
        '`temporal operator search-attribute create --name LoopwrightAgent --type Keyword` (and LoopwrightBundle, LoopwrightStatus Keyword; LoopwrightTurns, LoopwrightTotalTokens Int).';
      if (json) out.log(JSON.stringify({ error: message, type: 'NoSearchAttributes' }));
      else out.error(message);
      return EXIT.FAILED;
    }
    const sessions = await temporal.loopwright.list({ agent: options.agent, status: options.status, limit: options.limit ?? 50 });
    if (json) {
      // One object, as every --json command prints: room for more fields without breaking readers.
      out.log(JSON.stringify({ sessions, count: sessions.length }));
      return EXIT.OK;
    }
    if (sessions.length === 0) {
      out.log('No sessions found.');
      return EXIT.OK;
    }
    for (const s of sessions) {
      const budget = s.budget ? budgetSummary(s.budget) : '';
      out.log(
        `${s.workflowId}  ${s.agent ?? '?'}  ${s.status ?? s.workflowStatus.toLowerCase()}  ${s.turns ?? 0} turn(s)  ${s.totalTokens ?? 0} tokens  ${s.startTime.toISOString()}${budget ? `  budget: ${budget}` : ''}`,
      );
    }
    return EXIT.OK;
  });
}

/** `loopwright status <id> [--json]`. */
export async function statusCommand(workflowId: string, options: JsonOption, out: CommandOutput): Promise<number> {
  const json = options.json === true;
  const temporal = await openTemporal(out);
  try {
    const session = temporal.loopwright.session(workflowId);
    const description = await session.workflow.describe();
    let state: SessionState | undefined;
    try {
      // Queries are answered by a worker; when none polls, this command runs one for the moment.
      state = await withWorker(temporal, { startIfSlow: true, onStart: workerNotice(out, json) }, () => session.state());
    } catch (err) {
      // A closed workflow whose history cannot be replayed any more still has its description.
      if (description.status.name === 'RUNNING') throw err;
    }
    if (json) {
      out.log(JSON.stringify({ workflowId, workflowStatus: description.status.name, state }, null, 2));
      return EXIT.OK;
    }
    out.log(`Session ${workflowId}: workflow ${description.status.name.toLowerCase()}`);
    if (state) {
      out.log(`  agent:      ${state.agent ? `${state.agent.name} (${state.agent.title})` : '(initialising)'}`);
      out.log(`  status:     ${state.status}`);
      out.log(`  turn:       ${state.turn}, iteration ${state.iteration}/${state.maxIterations}`);
      if (state.runningTools.length) out.log(`  running:    ${state.runningTools.map((t) => (t.detail ? `${t.name} ${t.detail}` : t.name)).join(', ')}`);
      for (const p of state.pendingApprovals ?? []) {
        const { head, details } = approvalLines(p);
        out.log(`  approval:   ${p.callId} ${head}  (loopwright approve|deny ${workflowId} ${p.callId})`);
        for (const line of details) out.log(`              ${line}`);
      }
      if (state.pendingQuestion) out.log(`  question:   ${state.pendingQuestion.question}  (answer with loopwright send)`);
      out.log(`  tokens:     ${state.usage.totalTokens} (prompt ${state.usage.promptTokens}, completion ${state.usage.completionTokens})`);
      out.log(`  messages:   ${state.messageCount} (${state.transcriptBytes} bytes)${state.run > 1 ? `, run ${state.run} (continued as new ${state.run - 1} time(s))` : ''}`);
      for (const line of stateDetailLines(state)) out.log(`  ${line}`);
      if (state.lastTurn) out.log(`  last turn:  ${state.lastTurn.status} after ${state.lastTurn.iterations} iteration(s)`);
      if (state.error) out.log(`  error:      ${state.error}`);
      for (const warning of state.warnings ?? []) out.log(`  warning:    ${warning}`);
    }
    if (temporal.uiUrl) out.log(`  history:    ${webUiLink(temporal, workflowId)}`);
    return EXIT.OK;
  } finally {
    await temporal.close();
  }
}

/**
 * `loopwright tools <id> [--json]`: the tools the session offers its model, from its state (listed
 * when its run started). A session that has not listed them (recorded before tools were listed, or
 * still initialising) says so; --json has `tools: null` then.
 */
export async function toolsCommand(workflowId: string, options: JsonOption, out: CommandOutput): Promise<number> {
  const json = options.json === true;
  return withSession(out, async (temporal) => {
    const session = temporal.loopwright.session(workflowId);
    // Queries are answered by a worker; when none polls, this command runs one for the moment.
    const state = await withWorker(temporal, { startIfSlow: true, onStart: workerNotice(out, json) }, () => session.state());
    const tools = state.tools;
    if (json) {
      out.log(JSON.stringify({ workflowId, tools: tools ?? null }, null, 2));
      return EXIT.OK;
    }
    if (tools === undefined) {
      const why = state.agent ? 'it was started by a version of loopwright that did not list them, and offers the built-in tools' : 'it is still starting';
      out.log(`Session ${workflowId} has not listed its tools: ${why}.`);
      return EXIT.OK;
    }
    out.log(`Session ${workflowId} offers ${tools.length} tool(s)${tools.length > 0 ? ':' : '.'}`);
    const width = Math.max(0, ...tools.map((t) => t.name.length));
    for (const tool of tools) out.log(`  ${toolLine(tool, width)}`);
    return EXIT.OK;
  });
}
