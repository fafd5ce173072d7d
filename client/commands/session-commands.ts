/**
 * `loopwright run | send | interrupt | status | end`: start and talk to sessions from a shell.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { ChatMessage } from '../../common/messages';
import type { SessionInput, SessionState, TurnResult } from '../../common/session-types';
import { hasLongLivedWorker, withWorker } from '../in-process-worker';
import { type CommandOutput, describeError, UsageError } from '../output';
import { watchProgress } from '../progress';
import { SessionRejectedError, type SessionHandle } from '../session-client';
import { setRejoinHint } from '../exit-on-signal';
import { openTemporal, type TemporalSession } from '../temporal-session';

/** `loopwright run <bundle> <agent> "<message>"`. */
export async function runCommand(argv: string[], out: CommandOutput): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      detach: { type: 'boolean', default: false },
      once: { type: 'boolean', default: false },
      'max-iterations': { type: 'string' },
      model: { type: 'string' },
      id: { type: 'string' },
      'no-check': { type: 'boolean', default: false },
      ...SANDBOX_OPTIONS,
    },
  });
  const [bundlePath, agentId, message] = positionals;
  if (!bundlePath || !agentId || message === undefined) {
    throw new UsageError('run needs <bundle> <agent> "<message>"');
  }
  if (message.trim() === '') throw new UsageError('the message must not be empty');
  const maxIterations = parsePositiveInt(values['max-iterations'], '--max-iterations');
  const sandbox = sandboxSettings(values);
  // A bundle that cannot be loaded here would only leave a failed workflow behind.
  if (!values['no-check']) {
    const problem = await checkBundleLocally(bundlePath, agentId, sandbox);
    if (problem) {
      if (values.json) out.log(JSON.stringify({ workflowId: null, success: false, status: 'failed', error: problem }));
      else out.error(`Error: ${problem}`);
      return 1;
    }
  }

  const temporal = await openTemporal(out);
  try {
    const oneShot = values.once;
    const session = await temporal.loopwright.start({
      bundlePath,
      agentId,
      workflowId: values.id,
      maxIterations,
      model: values.model,
      ...sandbox,
      // A one-shot or detached run carries its message in the input; an interactive one sends it
      // through the `send` update so that the reply comes back as the update's result.
      ...(oneShot || values.detach ? { firstMessage: message } : {}),
      ...(oneShot ? { oneShot: true } : {}),
    });
    setRejoinHint(`loopwright status ${session.workflowId}`);
    if (!values.json) {
      out.error(`Session ${session.workflowId} started${temporal.uiUrl ? ` — ${webUiLink(temporal, session.workflowId)}` : ''}`);
    }
    if (values.detach) {
      if (values.json) out.log(JSON.stringify({ workflowId: session.workflowId, detached: true }));
      else out.log(session.workflowId);
      if (await hasLongLivedWorker(temporal)) {
        out.error(`Detached: a worker polls task queue ${temporal.taskQueue} and runs the session; follow it with \`loopwright status ${session.workflowId}\`.`);
      } else {
        out.error(
          `Detached, but no worker is polling task queue ${temporal.taskQueue}: the session waits until one does. ` +
            `Start one with \`LOOPWRIGHT_TASK_QUEUE=${temporal.taskQueue} loopwright worker\`, then follow it with \`loopwright status ${session.workflowId}\`.`,
        );
      }
      return 0;
    }
    let result: TurnResult;
    try {
      result = await withWorker(temporal, { watch: session.workflow, onStart: workerNotice(out, values.json) }, async () => {
        const turn = await (oneShot ? oneShotTurn(session, out, !values.json) : sendWithProgress(session, message, out, !values.json));
        // Asked while this command's worker (if any) still runs: a query needs one.
        if (!values.json) await printWarnings(session, out);
        return turn;
      });
    } catch (err) {
      if (!values.json) throw err;
      // Scripts reading --json get an object whatever happened.
      out.log(JSON.stringify({ workflowId: session.workflowId, success: false, status: 'failed', error: describeError(err) }));
      return 1;
    }
    printTurn(result, session, out, values.json);
    if (!values.json && !oneShot) {
      out.error(`Continue with: loopwright send ${session.workflowId} "<message>"   ·   finish with: loopwright end ${session.workflowId}`);
    }
    return result.success ? 0 : 1;
  } finally {
    await temporal.close();
  }
}

/**
 * Initialise the agent in this process, as the worker will: a missing bundle, an unknown agent or a
 * broken critical action is reported before any workflow starts. Returns the problem, if any.
 */
async function checkBundleLocally(bundlePath: string, agentId: string, sandbox: SandboxSettings = {}): Promise<string | undefined> {
  const absolute = path.resolve(bundlePath);
  if (!fs.existsSync(absolute)) {
    return `Bundle not found: ${absolute} (if it exists only where your worker runs, pass --no-check)`;
  }
  const { initializeAgent } = await import('../../bundle/initialize-agent');
  const { BundleError } = await import('../../bundle/errors');
  try {
    await initializeAgent({ bundlePath: absolute, agentId, ...sandbox });
    return undefined;
  } catch (err) {
    if (err instanceof BundleError) return err.message;
    throw err;
  }
}

/** Flags that set the session's project and sandbox (shared by run and chat). */
export const SANDBOX_OPTIONS = {
  'project-root': { type: 'string' },
  output: { type: 'string', multiple: true },
  strict: { type: 'boolean', default: false },
  'allow-broad-project-root': { type: 'boolean', default: false },
  'allow-secret-files': { type: 'boolean', default: false },
  'allow-hard-links': { type: 'boolean', default: false },
} as const;

/** The session settings the sandbox flags give. */
export type SandboxSettings = Pick<SessionInput, 'projectRoot' | 'outputRoots' | 'strict' | 'allowBroadProjectRoot' | 'allowSecretFiles' | 'allowHardLinks'>;

/**
 * `{project-root}` is the folder the command runs in (or --project-root), recorded as an absolute,
 * symlink-free path so that the worker's own folder never matters and replay sees the same value.
 */
export function sandboxSettings(values: {
  'project-root'?: string;
  output?: string[];
  strict?: boolean;
  'allow-broad-project-root'?: boolean;
  'allow-secret-files'?: boolean;
  'allow-hard-links'?: boolean;
}): SandboxSettings {
  const root = path.resolve(values['project-root'] ?? process.cwd());
  if (!fs.existsSync(root)) throw new UsageError(`--project-root ${values['project-root']}: no such folder`);
  const projectRoot = fs.realpathSync(root);
  return {
    projectRoot,
    ...(values.output?.length ? { outputRoots: values.output.map((o) => path.resolve(projectRoot, o)) } : {}),
    ...(values.strict ? { strict: true } : {}),
    ...(values['allow-broad-project-root'] ? { allowBroadProjectRoot: true } : {}),
    ...(values['allow-secret-files'] ? { allowSecretFiles: true } : {}),
    ...(values['allow-hard-links'] ? { allowHardLinks: true } : {}),
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
export async function sendCommand(argv: string[], out: CommandOutput): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { json: { type: 'boolean', default: false } } });
  const [workflowId, message] = positionals;
  if (!workflowId || message === undefined) throw new UsageError('send needs <workflow-id> "<message>"');
  return withSession(out, async (temporal) => {
    const session = temporal.loopwright.session(workflowId);
    const result = await withWorker(temporal, { watch: session.workflow, onStart: workerNotice(out, values.json) }, () =>
      sendWithProgress(session, message, out, !values.json),
    );
    printTurn(result, session, out, values.json);
    return result.success ? 0 : 1;
  });
}

/** `loopwright approve <id> [call-id]`: let a waiting tool call run (all of them without a call id). */
export async function approveCommand(argv: string[], out: CommandOutput): Promise<number> {
  const [workflowId, callId] = argv;
  if (!workflowId) throw new UsageError('approve needs <workflow-id> [call-id]');
  return decideCommand(workflowId, out, (session) => session.approve(callId), 'Approved');
}

/** `loopwright deny <id> [call-id] [reason]`: refuse a waiting tool call; the model sees the reason. */
export async function denyCommand(argv: string[], out: CommandOutput): Promise<number> {
  const [workflowId, callId, ...reason] = argv;
  if (!workflowId) throw new UsageError('deny needs <workflow-id> [call-id] [reason]');
  const id = callId === undefined || callId === '-' ? undefined : callId;
  return decideCommand(workflowId, out, (session) => session.deny(id, reason.join(' ') || undefined), 'Denied');
}

/** `loopwright extend <id> [n]`: raise the running turn's iteration limit. */
export async function extendCommand(argv: string[], out: CommandOutput): Promise<number> {
  const [workflowId, raw] = argv;
  if (!workflowId) throw new UsageError('extend needs <workflow-id> [n]');
  const n = parsePositiveInt(raw, 'n');
  return updateCommand(workflowId, out, (session) => session.extend(n), (limit) => `The running turn of ${workflowId} may now make ${limit} model calls`);
}

/** `loopwright rewind <id> --to-turn k`: back to the end of turn k, with Temporal's reset. */
export async function rewindCommand(argv: string[], out: CommandOutput): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { 'to-turn': { type: 'string' } } });
  const [workflowId] = positionals;
  const turn = parsePositiveInt(values['to-turn'], '--to-turn');
  if (!workflowId || turn === undefined) throw new UsageError('rewind needs <workflow-id> --to-turn <k>');
  return updateCommand(workflowId, out, (session) => session.rewind(turn), ({ runId }) =>
    `Session ${workflowId} is back at the end of turn ${turn} (new run ${runId}, a reset you can see in the Web UI). Files written after that point stay on disk.`,
  );
}

/** `loopwright branch <id> --at-turn k [--id NEW]`: a new session from the first k turns of another. */
export async function branchCommand(argv: string[], out: CommandOutput): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { 'at-turn': { type: 'string' }, id: { type: 'string' } } });
  const [workflowId] = positionals;
  const turn = parsePositiveInt(values['at-turn'], '--at-turn');
  if (!workflowId || turn === undefined) throw new UsageError('branch needs <workflow-id> --at-turn <k>');
  return withSession(out, async (temporal) => {
    const branch = await temporal.loopwright.branch(workflowId, turn, values.id ? { workflowId: values.id } : {});
    out.log(branch.workflowId);
    out.error(`Session ${branch.workflowId} starts from the first ${turn} turn(s) of ${workflowId}; continue with: loopwright send ${branch.workflowId} "<message>". Files ${workflowId} wrote after that point stay on disk.`);
    return 0;
  });
}

function decideCommand(workflowId: string, out: CommandOutput, decide: (session: SessionHandle) => Promise<string[]>, verb: string): Promise<number> {
  return updateCommand(workflowId, out, decide, (ids) => `${verb}: ${ids.join(', ')}`);
}

/** Run one update on a session (a worker is run here if none answers) and print its outcome; a refusal exits 1. */
async function updateCommand<T>(workflowId: string, out: CommandOutput, call: (session: SessionHandle) => Promise<T>, describe: (result: T) => string): Promise<number> {
  return withSession(out, async (temporal) => {
    const session = temporal.loopwright.session(workflowId);
    const result = await withWorker(temporal, { startIfSlow: true, onStart: workerNotice(out, false) }, () => call(session));
    out.log(describe(result));
    return 0;
  });
}

/** Run `fn` with a connection for one command; a session's refusal prints `Rejected: …` and exits 1. */
async function withSession(out: CommandOutput, fn: (temporal: TemporalSession) => Promise<number>): Promise<number> {
  const temporal = await openTemporal(out);
  try {
    return await fn(temporal);
  } catch (err) {
    if (err instanceof SessionRejectedError) {
      out.error(`Rejected: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    await temporal.close();
  }
}

/** `loopwright interrupt <id> [reason]`: says so, with exit status 1, when no turn is running. */
export async function interruptCommand(argv: string[], out: CommandOutput): Promise<number> {
  const [workflowId, reason] = argv;
  if (!workflowId) throw new UsageError('interrupt needs <workflow-id>');
  const temporal = await openTemporal(out);
  try {
    const session = temporal.loopwright.session(workflowId);
    const state = await withWorker(temporal, { startIfSlow: true, onStart: workerNotice(out, false) }, () => session.state());
    if (!['thinking', 'executing_tool', 'waiting_for_approval'].includes(state.status)) {
      out.error(`No turn is running in ${workflowId} (status: ${state.status.replace(/_/g, ' ')}); nothing to interrupt`);
      return 1;
    }
    await session.interrupt(reason);
    out.log(`Interrupt sent to ${workflowId} (turn ${state.turn}, iteration ${state.iteration})`);
    return 0;
  } finally {
    await temporal.close();
  }
}

/** `loopwright end <id>`: the session completes after its current turn. */
export async function endCommand(argv: string[], out: CommandOutput): Promise<number> {
  const [workflowId] = argv;
  if (!workflowId) throw new UsageError('end needs <workflow-id>');
  const temporal = await openTemporal(out);
  try {
    const session = temporal.loopwright.session(workflowId);
    await session.end();
    const result = await withWorker(temporal, { watch: session.workflow, onStart: workerNotice(out, false) }, () => session.result());
    out.log(`Session ${workflowId} ended after ${result.turns} turn(s) (${result.usage.totalTokens} tokens)`);
    return 0;
  } finally {
    await temporal.close();
  }
}

/** `loopwright transcript <id> [--json] [--from N]`: the whole conversation, across the session's runs. */
export async function transcriptCommand(argv: string[], out: CommandOutput): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false }, from: { type: 'string' } },
  });
  const [workflowId] = positionals;
  if (!workflowId) throw new UsageError('transcript needs <workflow-id>');
  const from = values.from === undefined ? 0 : Number(values.from);
  if (!Number.isInteger(from) || from < 0) throw new UsageError(`--from must be a whole number >= 0, got "${values.from}"`);
  const temporal = await openTemporal(out);
  try {
    const session = temporal.loopwright.session(workflowId);
    // Queries are answered by a worker (a closed session's by replaying it); run one if none polls.
    const [messages, state] = await withWorker(temporal, { startIfSlow: true, onStart: workerNotice(out, values.json) }, async () => [await session.messages(from), await session.state()] as const);
    if (values.json) {
      out.log(JSON.stringify({ workflowId, runs: state.run, turns: state.turn, from, messages }));
      return 0;
    }
    out.log(`Session ${workflowId}: ${messages.length} message(s), ${state.turn} turn(s), ${state.run} run(s)`);
    messages.forEach((message, i) => out.log(formatMessage(from + i, message)));
    return 0;
  } finally {
    await temporal.close();
  }
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

/** `loopwright list [--agent A] [--status S] [--limit N] [--json]`: sessions found by their search attributes. */
export async function listCommand(argv: string[], out: CommandOutput): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { agent: { type: 'string' }, status: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  const limit = parsePositiveInt(values.limit, '--limit') ?? 50;
  const temporal = await openTemporal(out);
  try {
    if (!(await temporal.loopwright.hasSearchAttributes())) {
      out.error(
        `The namespace ${temporal.namespace} has no Loopwright search attributes; register them once (see README, "Watching a session"), e.g. ` +
          '`temporal operator search-attribute create --name LoopwrightAgent --type Keyword` (and LoopwrightBundle, LoopwrightStatus Keyword; LoopwrightTurns, LoopwrightTotalTokens Int).',
      );
      return 1;
    }
    const sessions = await temporal.loopwright.list({ agent: values.agent, status: values.status, limit });
    if (values.json) {
      out.log(JSON.stringify(sessions));
      return 0;
    }
    if (sessions.length === 0) {
      out.log('No sessions found.');
      return 0;
    }
    for (const s of sessions) {
      out.log(
        `${s.workflowId}  ${s.agent ?? '?'}  ${s.status ?? s.workflowStatus.toLowerCase()}  ${s.turns ?? 0} turn(s)  ${s.totalTokens ?? 0} tokens  ${s.startTime.toISOString()}`,
      );
    }
    return 0;
  } finally {
    await temporal.close();
  }
}

/** `loopwright status <id> [--json]`. */
export async function statusCommand(argv: string[], out: CommandOutput): Promise<number> {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { json: { type: 'boolean', default: false } } });
  const [workflowId] = positionals;
  if (!workflowId) throw new UsageError('status needs <workflow-id>');
  const temporal = await openTemporal(out);
  try {
    const session = temporal.loopwright.session(workflowId);
    const description = await session.workflow.describe();
    let state: SessionState | undefined;
    try {
      // Queries are answered by a worker; when none polls, this command runs one for the moment.
      state = await withWorker(temporal, { startIfSlow: true, onStart: workerNotice(out, values.json) }, () => session.state());
    } catch (err) {
      // A closed workflow whose history cannot be replayed any more still has its description.
      if (description.status.name === 'RUNNING') throw err;
    }
    if (values.json) {
      out.log(JSON.stringify({ workflowId, workflowStatus: description.status.name, state }, null, 2));
      return 0;
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
    return 0;
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
        ...(result.error ? { error: result.error } : {}),
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

function parsePositiveInt(raw: string | undefined, flag: string): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new UsageError(`${flag} must be a positive whole number, got "${raw}"`);
  return value;
}
