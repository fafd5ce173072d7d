/**
 * `loopwright run | send | interrupt | status | list | transcript | approve | deny | extend |
 * rewind | branch | end`: start and talk to sessions from a shell. Each command receives its
 * arguments and options parsed (client/cli.ts defines them) and resolves to its exit status; an
 * error it throws is reported by the command line (client/exit-codes.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { MAX_ITERATIONS_EXCEEDED, TURN_FAILED } from '../../common/failure-types';
import type { ChatMessage } from '../../common/messages';
import type { SessionInput, SessionState, TurnResult } from '../../common/session-types';
import { EXIT, reportFailure } from '../exit-codes';
import { hasLongLivedWorker, withWorker } from '../in-process-worker';
import { type CommandOutput, UsageError } from '../output';
import { watchProgress } from '../progress';
import type { SessionHandle } from '../session-client';
import { setRejoinHint } from '../exit-on-signal';
import { openTemporal, type TemporalSession } from '../temporal-session';

/** Options of commands that print one JSON object with `--json`. */
export interface JsonOption {
  json?: boolean;
}

/** The flags that set a session's project and sandbox (run and chat), as the command line parses them. */
export interface SandboxOptions {
  projectRoot?: string;
  output?: string[];
  strict?: boolean;
  allowBroadProjectRoot?: boolean;
  allowSecretFiles?: boolean;
  allowHardLinks?: boolean;
}

/** Options of `loopwright run`. */
export interface RunOptions extends SandboxOptions, JsonOption {
  once?: boolean;
  detach?: boolean;
  maxIterations?: number;
  model?: string;
  id?: string;
  /** False with `--no-check`: skip loading the bundle here first. */
  check?: boolean;
}

/** `loopwright run <bundle> <agent> "<message>"`. */
export async function runCommand(bundlePath: string, agentId: string, message: string, options: RunOptions, out: CommandOutput): Promise<number> {
  if (message.trim() === '') throw new UsageError('the message must not be empty');
  const json = options.json === true;
  const sandbox = sandboxSettings(options);
  // A bundle that cannot be loaded here would only leave a failed workflow behind.
  if (options.check !== false) {
    const problem = await checkBundleLocally(bundlePath, agentId, sandbox);
    if (problem) {
      if (json) out.log(JSON.stringify({ workflowId: null, success: false, status: 'failed', error: problem.message, type: problem.type }));
      else out.error(`Error: ${problem.message}`);
      return EXIT.FAILED;
    }
  }

  const temporal = await openTemporal(out);
  try {
    const oneShot = options.once === true;
    const session = await temporal.loopwright.start({
      bundlePath,
      agentId,
      workflowId: options.id,
      maxIterations: options.maxIterations,
      model: options.model,
      ...sandbox,
      // A one-shot or detached run carries its message in the input; an interactive one sends it
      // through the `send` update so that the reply comes back as the update's result.
      ...(oneShot || options.detach ? { firstMessage: message } : {}),
      ...(oneShot ? { oneShot: true } : {}),
    });
    setRejoinHint(`loopwright status ${session.workflowId}`);
    if (!json) {
      out.error(`Session ${session.workflowId} started${temporal.uiUrl ? ` — ${webUiLink(temporal, session.workflowId)}` : ''}`);
    }
    if (options.detach) {
      if (json) out.log(JSON.stringify({ workflowId: session.workflowId, detached: true }));
      else out.log(session.workflowId);
      if (await hasLongLivedWorker(temporal)) {
        out.error(`Detached: a worker polls task queue ${temporal.taskQueue} and runs the session; follow it with \`loopwright status ${session.workflowId}\`.`);
      } else {
        out.error(
          `Detached, but no worker is polling task queue ${temporal.taskQueue}: the session waits until one does. ` +
            `Start one with \`LOOPWRIGHT_TASK_QUEUE=${temporal.taskQueue} loopwright worker\`, then follow it with \`loopwright status ${session.workflowId}\`.`,
        );
      }
      return EXIT.OK;
    }
    let result: TurnResult;
    try {
      result = await withWorker(temporal, { watch: session.workflow, onStart: workerNotice(out, json) }, async () => {
        const turn = await (oneShot ? oneShotTurn(session, out, !json) : sendWithProgress(session, message, out, !json));
        // Asked while this command's worker (if any) still runs: a query needs one.
        if (!json) await printWarnings(session, out);
        return turn;
      });
    } catch (err) {
      if (!json) throw err;
      // Scripts reading --json get an object whatever happened, naming the session.
      return reportFailure(out, err, { json, fields: { workflowId: session.workflowId, success: false, status: 'failed' } });
    }
    printTurn(result, session, out, json);
    if (!json && !oneShot) {
      out.error(`Continue with: loopwright send ${session.workflowId} "<message>"   ·   finish with: loopwright end ${session.workflowId}`);
    }
    return result.success ? EXIT.OK : EXIT.FAILED;
  } finally {
    await temporal.close();
  }
}

/**
 * Initialise the agent in this process, as the worker will: a missing bundle, an unknown agent or a
 * broken critical action is reported before any workflow starts. Returns the problem, if any, with
 * its type (the bundle error's class, or `BundleNotFound`).
 */
async function checkBundleLocally(bundlePath: string, agentId: string, sandbox: SandboxSettings = {}): Promise<{ message: string; type: string } | undefined> {
  const absolute = path.resolve(bundlePath);
  if (!fs.existsSync(absolute)) {
    return { message: `Bundle not found: ${absolute} (if it exists only where your worker runs, pass --no-check)`, type: 'BundleNotFound' };
  }
  const { initializeAgent } = await import('../../bundle/initialize-agent');
  const { BundleError } = await import('../../bundle/errors');
  try {
    await initializeAgent({ bundlePath: absolute, agentId, ...sandbox });
    return undefined;
  } catch (err) {
    if (err instanceof BundleError) return { message: err.message, type: err.name };
    throw err;
  }
}

/** The session settings the sandbox flags give. */
export type SandboxSettings = Pick<SessionInput, 'projectRoot' | 'outputRoots' | 'strict' | 'allowBroadProjectRoot' | 'allowSecretFiles' | 'allowHardLinks'>;

/**
 * `{project-root}` is the folder the command runs in (or --project-root), recorded as an absolute,
 * symlink-free path so that the worker's own folder never matters and replay sees the same value.
 */
export function sandboxSettings(options: SandboxOptions): SandboxSettings {
  const root = path.resolve(options.projectRoot ?? process.cwd());
  if (!fs.existsSync(root)) throw new UsageError(`--project-root ${options.projectRoot}: no such folder`);
  const projectRoot = fs.realpathSync(root);
  return {
    projectRoot,
    ...(options.output?.length ? { outputRoots: options.output.map((o) => path.resolve(projectRoot, o)) } : {}),
    ...(options.strict ? { strict: true } : {}),
    ...(options.allowBroadProjectRoot ? { allowBroadProjectRoot: true } : {}),
    ...(options.allowSecretFiles ? { allowSecretFiles: true } : {}),
    ...(options.allowHardLinks ? { allowHardLinks: true } : {}),
  };
}

/**
 * Say, once, what initialisation warned about (e.g. a file a critical action names is missing).
 * Called after a turn, so the agent is initialised; a state that does not come in 3 s is skipped.
 */
async function printWarnings(session: SessionHandle, out: CommandOutput): Promise<void> {
  const timeout = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 3_000).unref());
  const state = await Promise.race([session.state(), timeout]).catch(() => undefined);
  for (const warning of state?.warnings ?? []) out.error(`Warning: ${warning}`);
}

/** `loopwright send <id> "<message>"`. */
export async function sendCommand(workflowId: string, message: string, options: JsonOption, out: CommandOutput): Promise<number> {
  const json = options.json === true;
  return withSession(out, async (temporal) => {
    const session = temporal.loopwright.session(workflowId);
    const result = await withWorker(temporal, { watch: session.workflow, onStart: workerNotice(out, json) }, () => sendWithProgress(session, message, out, !json));
    printTurn(result, session, out, json);
    return result.success ? EXIT.OK : EXIT.FAILED;
  });
}

/** `loopwright approve <id> [call-id]`: let a waiting tool call run (all of them without a call id). */
export async function approveCommand(workflowId: string, callId: string | undefined, options: JsonOption, out: CommandOutput): Promise<number> {
  return updateCommand(workflowId, out, options, (session) => session.approve(callId), (ids) => ({ text: `Approved: ${ids.join(', ')}`, fields: { approved: ids } }));
}

/** `loopwright deny <id> [call-id|-] [reason]`: refuse a waiting tool call (`-` or none: every one); the model sees the reason. */
export async function denyCommand(workflowId: string, callId: string | undefined, reason: string | undefined, options: JsonOption, out: CommandOutput): Promise<number> {
  const id = callId === undefined || callId === '-' ? undefined : callId;
  return updateCommand(workflowId, out, options, (session) => session.deny(id, reason || undefined), (ids) => ({ text: `Denied: ${ids.join(', ')}`, fields: { denied: ids } }));
}

/** `loopwright extend <id> [n]`: raise the running turn's iteration limit (by the session's limit without n). */
export async function extendCommand(workflowId: string, n: number | undefined, options: JsonOption, out: CommandOutput): Promise<number> {
  return updateCommand(workflowId, out, options, (session) => session.extend(n), (limit) => ({
    text: `The running turn of ${workflowId} may now make ${limit} model calls`,
    fields: { maxIterations: limit },
  }));
}

/** `loopwright rewind <id> --to-turn k`: back to the end of turn k, with Temporal's reset. */
export async function rewindCommand(workflowId: string, options: JsonOption & { toTurn: number }, out: CommandOutput): Promise<number> {
  const turn = options.toTurn;
  return updateCommand(workflowId, out, options, (session) => session.rewind(turn), ({ runId }) => ({
    text: `Session ${workflowId} is back at the end of turn ${turn} (new run ${runId}, a reset you can see in the Web UI). Files written after that point stay on disk.`,
    fields: { turn, runId },
  }));
}

/** `loopwright branch <id> --at-turn k [--id NEW]`: a new session from the first k turns of another. */
export async function branchCommand(workflowId: string, options: JsonOption & { atTurn: number; id?: string }, out: CommandOutput): Promise<number> {
  const turn = options.atTurn;
  return withSession(out, async (temporal) => {
    const branch = await temporal.loopwright.branch(workflowId, turn, options.id ? { workflowId: options.id } : {});
    if (options.json) {
      out.log(JSON.stringify({ workflowId: branch.workflowId, from: workflowId, turns: turn }));
      return EXIT.OK;
    }
    out.log(branch.workflowId);
    out.error(`Session ${branch.workflowId} starts from the first ${turn} turn(s) of ${workflowId}; continue with: loopwright send ${branch.workflowId} "<message>". Files ${workflowId} wrote after that point stay on disk.`);
    return EXIT.OK;
  });
}

/**
 * Run one update on a session (a worker is run here if none answers) and print its outcome: a line,
 * or with --json `{workflowId, ...fields}`. A refusal is thrown (the command line reports it, exit 1).
 */
async function updateCommand<T>(
  workflowId: string,
  out: CommandOutput,
  options: JsonOption,
  call: (session: SessionHandle) => Promise<T>,
  describe: (result: T) => { text: string; fields: Record<string, unknown> },
): Promise<number> {
  return withSession(out, async (temporal) => {
    const session = temporal.loopwright.session(workflowId);
    const result = await withWorker(temporal, { startIfSlow: true, onStart: workerNotice(out, options.json === true) }, () => call(session));
    const { text, fields } = describe(result);
    out.log(options.json ? JSON.stringify({ workflowId, ...fields }) : text);
    return EXIT.OK;
  });
}

/** Run `fn` with a connection for one command, closed afterwards whatever happens. */
async function withSession(out: CommandOutput, fn: (temporal: TemporalSession) => Promise<number>): Promise<number> {
  const temporal = await openTemporal(out);
  try {
    return await fn(temporal);
  } finally {
    await temporal.close();
  }
}

/** `loopwright interrupt <id> [reason]`: says so, with exit status 1, when no turn is running. */
export async function interruptCommand(workflowId: string, reason: string | undefined, options: JsonOption, out: CommandOutput): Promise<number> {
  const json = options.json === true;
  return withSession(out, async (temporal) => {
    const session = temporal.loopwright.session(workflowId);
    const state = await withWorker(temporal, { startIfSlow: true, onStart: workerNotice(out, json) }, () => session.state());
    if (!['thinking', 'executing_tool', 'waiting_for_approval'].includes(state.status)) {
      const message = `No turn is running in ${workflowId} (status: ${state.status.replace(/_/g, ' ')}); nothing to interrupt`;
      if (json) out.log(JSON.stringify({ workflowId, error: message, type: 'NoTurnRunning', status: state.status }));
      else out.error(message);
      return EXIT.FAILED;
    }
    await session.interrupt(reason || undefined);
    if (json) out.log(JSON.stringify({ workflowId, interrupted: true, turn: state.turn, iteration: state.iteration }));
    else out.log(`Interrupt sent to ${workflowId} (turn ${state.turn}, iteration ${state.iteration})`);
    return EXIT.OK;
  });
}

/** `loopwright end <id>`: the session completes after its current turn. */
export async function endCommand(workflowId: string, options: JsonOption, out: CommandOutput): Promise<number> {
  const json = options.json === true;
  return withSession(out, async (temporal) => {
    const session = temporal.loopwright.session(workflowId);
    await session.end();
    const result = await withWorker(temporal, { watch: session.workflow, onStart: workerNotice(out, json) }, () => session.result());
    if (json) out.log(JSON.stringify({ workflowId, turns: result.turns, usage: result.usage, endedBy: result.endedBy }));
    else out.log(`Session ${workflowId} ended after ${result.turns} turn(s) (${result.usage.totalTokens} tokens)`);
    return EXIT.OK;
  });
}

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
        `The namespace ${temporal.namespace} has no Loopwright search attributes; register them once (see README, "Watching a session"), e.g. ` +
        '`temporal operator search-attribute create --name LoopwrightAgent --type Keyword` (and LoopwrightBundle, LoopwrightStatus Keyword; LoopwrightTurns, LoopwrightTotalTokens Int).';
      if (json) out.log(JSON.stringify({ error: message, type: 'NoSearchAttributes' }));
      else out.error(message);
      return EXIT.FAILED;
    }
    const sessions = await temporal.loopwright.list({ agent: options.agent, status: options.status, limit: options.limit ?? 50 });
    if (json) {
      out.log(JSON.stringify(sessions));
      return EXIT.OK;
    }
    if (sessions.length === 0) {
      out.log('No sessions found.');
      return EXIT.OK;
    }
    for (const s of sessions) {
      out.log(
        `${s.workflowId}  ${s.agent ?? '?'}  ${s.status ?? s.workflowStatus.toLowerCase()}  ${s.turns ?? 0} turn(s)  ${s.totalTokens ?? 0} tokens  ${s.startTime.toISOString()}`,
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
      for (const p of state.pendingApprovals ?? []) out.log(`  approval:   ${p.callId} ${p.tool}${p.path ? ` ${p.path}` : ''} — ${p.preview}  (loopwright approve|deny ${workflowId} ${p.callId})`);
      if (state.pendingQuestion) out.log(`  question:   ${state.pendingQuestion.question}  (answer with loopwright send)`);
      out.log(`  tokens:     ${state.usage.totalTokens} (prompt ${state.usage.promptTokens}, completion ${state.usage.completionTokens})`);
      out.log(`  messages:   ${state.messageCount} (${state.transcriptBytes} bytes)${state.run > 1 ? `, run ${state.run} (continued as new ${state.run - 1} time(s))` : ''}`);
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

async function sendWithProgress(session: SessionHandle, message: string, out: CommandOutput, show: boolean): Promise<TurnResult> {
  const progress = show ? watchProgress(session, out) : undefined;
  try {
    return await session.send(message);
  } finally {
    progress?.stop();
  }
}

/** A one-shot session's result is its workflow result; a failed turn arrives as a failure carrying it. */
async function oneShotTurn(session: SessionHandle, out: CommandOutput, show: boolean): Promise<TurnResult> {
  const progress = show ? watchProgress(session, out) : undefined;
  try {
    const result = await session.result();
    if (!result.lastTurn) throw new Error('the session ended without a turn');
    return result.lastTurn;
  } catch (err) {
    const failure = err instanceof WorkflowFailedError ? err.cause : undefined;
    if (failure instanceof ApplicationFailure && failure.details?.[0]) {
      return failure.details[0] as TurnResult;
    }
    throw err;
  } finally {
    progress?.stop();
  }
}

function printTurn(result: TurnResult, session: SessionHandle, out: CommandOutput, json: boolean): void {
  if (json) {
    out.log(
      JSON.stringify({
        workflowId: session.workflowId,
        success: result.success,
        status: result.status,
        response: result.response,
        iterations: result.iterations,
        ...(result.error || !result.success ? { error: result.error ?? `the turn ended ${result.status.replace(/_/g, ' ')}` } : {}),
        // A failed turn is a failure like any other: its type says which (exit status 1).
        ...(result.success ? {} : { type: result.status === 'max_iterations' ? MAX_ITERATIONS_EXCEEDED : TURN_FAILED }),
      }),
    );
    return;
  }
  if (result.response) out.log(result.response);
  if (!result.success) out.error(`Turn ${result.status}: ${result.error ?? 'no reason given'} (${result.iterations} iteration(s))`);
}

/** Says on stderr (never in --json output) that the command runs a worker of its own, and why. */
function workerNotice(out: CommandOutput, json: boolean): (reason: string) => void {
  return (reason) => {
    if (!json) out.error(`  (${reason}; running one in this process)`);
  };
}

/** Link to a session's history in the Temporal Web UI. */
export function webUiLink(temporal: Pick<TemporalSession, 'uiUrl' | 'namespace'>, workflowId: string): string {
  return `${temporal.uiUrl}/namespaces/${encodeURIComponent(temporal.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}

