/**
 * `loopwright run | send | interrupt | approve | deny | extend | compact | budget | rewind | branch
 * | end`: start and talk to sessions from a shell (`status`, `list` and `transcript` are in
 * session-views.ts). Each command receives its arguments and options parsed
 * (cli/cli-session-commands.ts defines them) and resolves to its exit status; an error it throws
 * is reported by the command line (cli/exit-codes.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { BudgetChange, BudgetState, SessionInput, TurnResult } from '../../common/session-types';
import { EXIT, reportFailure } from '../exit-codes';
import { hasLongLivedWorker, withWorker } from '../in-process-worker';
import { type CommandOutput, UsageError } from '../output';
import { watchProgress } from '../progress';
import type { SessionHandle } from '../../client/session-client';
import { setRejoinHint } from '../exit-on-signal';
import { openTemporal } from '../temporal-session';
import { type JsonOption, updateCommand, webUiLink, withSession, workerNotice } from './command-support';
import { modelSessionSettings } from './session-settings';
import { settingsFromOptions } from './settings-from-options';
import { toolSessionSettings } from './tool-settings';
import { budgetLines, formatCompaction, turnExitCode, turnFailed, turnFailureType, turnNotes, turnStatusMessage } from './session-text';
import { startLiveReply } from './live-reply';
import { HEADLESS_STATUS_MISSING, HEADLESS_STATUS_MISSING_TEXT, headlessMessage, parseHeadlessStatus } from '../../common/headless';

export type { JsonOption } from './command-support';
export { webUiLink } from './command-support';
export type { ListOptions } from './session-views';

/** The flags that set a session's project and sandbox (run and chat), as commander parsed them (see the settings table's `sandbox` flags). */
export type SandboxOptions = object;

/** Options of `loopwright run`; the setting flags' values besides (see the settings table). */
export interface RunOptions extends JsonOption {
  once?: boolean;
  detach?: boolean;
  maxIterations?: number;
  model?: string;
  id?: string;
  /** False with `--no-check`: skip loading the bundle here first. */
  check?: boolean;
  /** `--headless`: a one-shot run without an interactive user, ending with a JSON status (see client/headless.ts). */
  headless?: boolean;
}

/** `loopwright run <bundle> <agent> "<message>"`. */
export async function runCommand(bundlePath: string, agentId: string, given: string, options: RunOptions, out: CommandOutput): Promise<number> {
  if (given.trim() === '') throw new UsageError('the message must not be empty');
  if (options.headless && options.detach) throw new UsageError('--headless waits for the JSON status at the end of the run; it cannot be --detach');
  const headless = options.headless === true;
  const message = headless ? headlessMessage(given) : given;
  const json = options.json === true;
  const sandbox = sandboxSettings(options);
  const live = !json && process.stdout.isTTY === true;
  const settings = modelSessionSettings(options, process.env, { terminal: live });
  const tools = toolSessionSettings(options);
  // A bundle that cannot be loaded here would only leave a failed workflow behind. The check and
  // the connection go on together; no session starts before the check has passed.
  const checked = options.check !== false ? checkBundleLocally(bundlePath, agentId, sandbox) : Promise.resolve(undefined);
  const opening = openTemporal(out);
  const [problem] = await Promise.all([checked, opening.catch(() => undefined)]);
  if (problem) {
    await opening.then((t) => t.close()).catch(() => undefined);
    if (json) out.log(JSON.stringify({ workflowId: null, success: false, status: 'failed', error: problem.message, type: problem.type }));
    else out.error(`Error: ${problem.message}`);
    return EXIT.FAILED;
  }

  const temporal = await opening;
  try {
    // A headless run has nobody to answer a question: one turn, without the question tool.
    const oneShot = options.once === true || headless;
    const session = await temporal.loopwright.start({
      bundlePath,
      agentId,
      workflowId: options.id,
      maxIterations: options.maxIterations,
      model: options.model,
      ...sandbox,
      ...settings,
      ...tools,
      // A one-shot or detached run carries its message in the input; an interactive one sends it
      // through the `send` update so that the reply comes back as the update's result.
      ...(oneShot || options.detach ? { firstMessage: message } : {}),
      ...(oneShot ? { oneShot: true } : {}),
      ...(headless ? { loopBreakers: false } : {}),
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
    let warnings: string[] = [];
    try {
      result = await withWorker(temporal, { watch: session.workflow, onStart: workerNotice(out, json) }, async () => {
        const turn: TurnResult & { warnings?: string[] } = await (oneShot ? oneShotTurn(session, out, !json, live) : sendWithProgress(session, message, out, !json, live));
        // A one-shot session's result carries them; else asked while this command's worker (if any) still runs: a query needs one.
        warnings = turn.warnings ?? (await sessionWarnings(session));
        if (!json) for (const warning of warnings) out.error(`Warning: ${warning}`);
        return turn;
      });
    } catch (err) {
      if (!json) throw err;
      // Scripts reading --json get an object whatever happened, naming the session.
      return reportFailure(out, err, { json, fields: { workflowId: session.workflowId, success: false, status: 'failed' } });
    }
    if (headless) return printHeadless(result, session, out, json, warnings);
    printTurn(result, session, out, json, warnings);
    if (!json && !oneShot) {
      out.error(`Continue with: loopwright send ${session.workflowId} "<message>"   ·   finish with: loopwright end ${session.workflowId}`);
    }
    return turnExitCode(result);
  } finally {
    await temporal.close();
  }
}

/**
 * Initialise the agent in this process, as the worker will: a missing bundle, an unknown agent or a
 * broken critical action is reported before any workflow starts. Returns the problem, if any, with
 * its type (the bundle error's class, or `BundleNotFound`).
 */
export async function checkBundleLocally(bundlePath: string, agentId: string, sandbox: SandboxSettings = {}): Promise<{ message: string; type: string } | undefined> {
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
export type SandboxSettings = Pick<
  SessionInput,
  'projectRoot' | 'outputRoots' | 'strict' | 'allowBroadProjectRoot' | 'userSkills' | 'skillFolders' | 'allowSecretFiles' | 'secretFiles' | 'allowHardLinks' | 'filesHost'
>;

/**
 * The sandbox settings of the options (the settings table's `sandbox` flags): `{project-root}` is
 * the folder the command runs in (or --project-root), recorded as an absolute, symlink-free path so
 * that the worker's own folder never matters and replay sees the same value; the files host is this
 * machine unless `--files-host` says otherwise.
 */
export function sandboxSettings(options: SandboxOptions): SandboxSettings {
  return settingsFromOptions(options, 'sandbox') as SandboxSettings;
}

/**
 * What initialisation warned about (e.g. a file a critical action names is missing), to say once.
 * Asked after a turn, so the agent is initialised; a state that does not come in 3 s is skipped.
 */
async function sessionWarnings(session: SessionHandle): Promise<string[]> {
  const timeout = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 3_000).unref());
  const state = await Promise.race([session.state(), timeout]).catch(() => undefined);
  return state?.warnings ?? [];
}

/** `loopwright send <id> "<message>"`. */
export async function sendCommand(workflowId: string, message: string, options: JsonOption, out: CommandOutput): Promise<number> {
  const json = options.json === true;
  return withSession(out, async (temporal) => {
    const session = temporal.loopwright.session(workflowId);
    const result = await withWorker(temporal, { watch: session.workflow, onStart: workerNotice(out, json) }, () => sendWithProgress(session, message, out, !json));
    printTurn(result, session, out, json);
    return turnExitCode(result);
  });
}

/** `loopwright approve <id> [call-id]`: let a waiting tool call run (all of them without a call id). */
export async function approveCommand(workflowId: string, callId: string | undefined, options: JsonOption, out: CommandOutput): Promise<number> {
  return updateCommand(
    workflowId,
    out,
    options,
    (session) => session.approve(callId),
    (ids) => ({ text: `Approved: ${ids.join(', ')}`, fields: { approved: ids } }),
  );
}

/** `loopwright deny <id> [call-id|-] [reason]`: refuse a waiting tool call (`-` or none: every one); the model sees the reason. */
export async function denyCommand(workflowId: string, callId: string | undefined, reason: string | undefined, options: JsonOption, out: CommandOutput): Promise<number> {
  const id = callId === undefined || callId === '-' ? undefined : callId;
  return updateCommand(
    workflowId,
    out,
    options,
    (session) => session.deny(id, reason || undefined),
    (ids) => ({ text: `Denied: ${ids.join(', ')}`, fields: { denied: ids } }),
  );
}

/** `loopwright extend <id> [n]`: raise the running turn's iteration limit (by the session's limit without n). */
export async function extendCommand(workflowId: string, n: number | undefined, options: JsonOption, out: CommandOutput): Promise<number> {
  return updateCommand(
    workflowId,
    out,
    options,
    (session) => session.extend(n),
    (limit) => ({
      text: `The running turn of ${workflowId} may now make ${limit} model calls`,
      fields: { maxIterations: limit },
    }),
  );
}

/** `loopwright compact <id>`: compact the model's view of the transcript now (refused while a turn runs). */
export async function compactCommand(workflowId: string, options: JsonOption, out: CommandOutput): Promise<number> {
  return updateCommand(
    workflowId,
    out,
    options,
    (session) => session.compact(),
    (compaction) => ({
      text: compaction ? formatCompaction(compaction) : 'nothing to compact',
      fields: { compaction },
    }),
  );
}

/** Options of `loopwright budget`: amounts to raise the budgets by. */
export interface BudgetOptions extends JsonOption {
  turnTokens?: number;
  sessionTokens?: number;
  cost?: number;
}

/**
 * `loopwright budget <id> [--turn-tokens n] [--session-tokens n] [--cost x]`: raise the budgets by
 * the amounts given and show them; without an amount, show them as the `state` query has them.
 */
export async function budgetCommand(workflowId: string, options: BudgetOptions, out: CommandOutput): Promise<number> {
  const change: BudgetChange = {
    ...(options.turnTokens !== undefined ? { turnTokens: options.turnTokens } : {}),
    ...(options.sessionTokens !== undefined ? { sessionTokens: options.sessionTokens } : {}),
    ...(options.cost !== undefined ? { sessionCost: options.cost } : {}),
  };
  const raise = Object.keys(change).length > 0;
  const describe = (budget: BudgetState | undefined): { text: string; fields: Record<string, unknown> } => ({
    text: budget
      ? [`Budgets of ${workflowId}${raise ? ' (raised)' : ''}:`, ...budgetLines(budget).map((line) => `  ${line}`)].join('\n')
      : `Session ${workflowId} reports no budgets (it started before budgets existed)`,
    fields: { budget: budget ?? null },
  });
  if (raise) return updateCommand(workflowId, out, options, (session) => session.budget(change), describe);
  return updateCommand(workflowId, out, options, async (session) => (await session.state()).budget, describe);
}

/** `loopwright rewind <id> --to-turn k`: back to the end of turn k, with Temporal's reset. */
export async function rewindCommand(workflowId: string, options: JsonOption & { toTurn: number }, out: CommandOutput): Promise<number> {
  const turn = options.toTurn;
  return updateCommand(
    workflowId,
    out,
    options,
    (session) => session.rewind(turn),
    ({ runId }) => ({
      text: `Session ${workflowId} is back at the end of turn ${turn} (new run ${runId}, a reset you can see in the Web UI). Files written after that point stay on disk.`,
      fields: { turn, runId },
    }),
  );
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
    out.error(
      `Session ${branch.workflowId} starts from the first ${turn} turn(s) of ${workflowId}; continue with: loopwright send ${branch.workflowId} "<message>". Files ${workflowId} wrote after that point stay on disk.`,
    );
    return EXIT.OK;
  });
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

/** Send and show progress; on a terminal the reply is printed while it is written (then not again). */
async function sendWithProgress(session: SessionHandle, message: string, out: CommandOutput, show: boolean, live = false): Promise<TurnResult & { shownLive?: boolean }> {
  const reply = live ? startLiveReply(session, { write: (t) => process.stdout.write(t), notice: (l) => out.error(l), before: () => undefined }) : undefined;
  const progress = show ? watchProgress(session, out, 400, () => reply?.writing === true) : undefined;
  try {
    const result = await session.send(message);
    await reply?.stop();
    return reply?.showed(result.response) ? { ...result, shownLive: true } : result;
  } finally {
    progress?.stop();
  }
}

/** A one-shot session's result is its workflow result; a failed turn arrives as a failure carrying it. */
async function oneShotTurn(session: SessionHandle, out: CommandOutput, show: boolean, live = false): Promise<TurnResult & { shownLive?: boolean; warnings?: string[] }> {
  const reply = live ? startLiveReply(session, { write: (t) => process.stdout.write(t), notice: (l) => out.error(l), before: () => undefined }, { turn: 1 }) : undefined;
  const progress = show ? watchProgress(session, out, 400, () => reply?.writing === true) : undefined;
  const shown = async (turn: TurnResult): Promise<TurnResult & { shownLive?: boolean }> => {
    await reply?.stop();
    return reply?.showed(turn.response) ? { ...turn, shownLive: true } : turn;
  };
  try {
    const result = await session.result();
    if (!result.lastTurn) throw new Error('the session ended without a turn');
    return { ...(await shown(result.lastTurn)), warnings: result.warnings ?? [] };
  } catch (err) {
    const failure = err instanceof WorkflowFailedError ? err.cause : undefined;
    if (failure instanceof ApplicationFailure && failure.details?.[0]) {
      return shown(failure.details[0] as TurnResult);
    }
    throw err;
  } finally {
    progress?.stop();
  }
}

/**
 * A headless run's outcome: the turn as `printTurn` shows it, with the JSON status its answer ended
 * with (`headless` with --json; a line on stderr otherwise). Exit status: 0 complete, 4 partial
 * (an artifact to review), 1 blocked, a failed turn, or an answer without the status.
 */
function printHeadless(result: TurnResult & { shownLive?: boolean }, session: SessionHandle, out: CommandOutput, json: boolean, warnings: string[]): number {
  const status = turnFailed(result) ? undefined : parseHeadlessStatus(result.response ?? undefined);
  const missing = !turnFailed(result) && status === undefined ? HEADLESS_STATUS_MISSING_TEXT : undefined;
  const exit = turnFailed(result) || missing !== undefined || status?.status === 'blocked' ? EXIT.FAILED : status?.status === 'partial' ? EXIT.PARTIAL : EXIT.OK;
  if (json) {
    const fields = { ...(status ? { headless: status } : {}), ...(missing ? { error: missing, type: HEADLESS_STATUS_MISSING } : {}) };
    printTurn(result, session, out, json, warnings, fields);
    return exit;
  }
  printTurn(result, session, out, json, warnings);
  if (missing) out.error(`Headless run: ${missing}`);
  else if (status) {
    const counts = [`${status.assumptions?.length ?? 0} assumption(s)`, `${status.open_questions?.length ?? 0} open question(s)`].join(', ');
    out.error(`Headless run: ${status.status} (${counts})${typeof status.reason === 'string' ? `: ${status.reason}` : ''}`);
  }
  return exit;
}

function printTurn(result: TurnResult & { shownLive?: boolean }, session: SessionHandle, out: CommandOutput, json: boolean, warnings: string[] = [], extra: Record<string, unknown> = {}): void {
  const failed = turnFailed(result);
  const message = turnStatusMessage(result, { workflowId: session.workflowId });
  if (json) {
    out.log(
      JSON.stringify({
        workflowId: session.workflowId,
        success: result.success,
        status: result.status,
        response: result.response,
        iterations: result.iterations,
        ...(result.compactions?.length ? { compactions: result.compactions } : {}),
        ...(result.continuations ? { continuations: result.continuations } : {}),
        ...(result.cost !== undefined ? { cost: result.cost } : {}),
        ...(result.modelWarnings?.length ? { modelWarnings: result.modelWarnings } : {}),
        ...(result.verification ? { verification: result.verification } : {}),
        ...(result.bundleChanges?.length ? { bundleChanges: result.bundleChanges } : {}),
        // What initialisation warned about, as the line output prints it (e.g. a missing critical-action file).
        ...(warnings.length ? { warnings } : {}),
        ...(result.error || failed ? { error: message ?? result.error ?? `the turn ended ${result.status.replace(/_/g, ' ')}` } : {}),
        // A failed turn is a failure like any other: its type says which (exit status 1).
        ...(failed ? { type: turnFailureType(result.status) } : {}),
        ...extra,
      }),
    );
    return;
  }
  if (result.response && !result.shownLive) out.log(result.response);
  for (const note of turnNotes(result)) out.error(`  (${note})`);
  if (message) out.error(message);
  else if (failed) out.error(`Turn ${result.status}: ${result.error ?? 'no reason given'} (${result.iterations} iteration(s))`);
}
