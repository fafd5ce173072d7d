/**
 * The tools of one reply, from workflow code: every call at once (after a human's yes where one is
 * needed, as a child session when delegated, else as its tool's activity), except writes to the
 * same target, which run one after the other in reply order; or the results the model-call
 * activity already has (inline reads). Results are appended in tool-call order either way.
 */
import { log, patched } from '@temporalio/workflow';
import type { ToolCall, ToolResult } from '../../common/messages';
import type { SessionTool } from '../../common/offered-tools';
import { loopToolSpec, TOOL_SPECS, toolSpec } from '../../common/tools';
import { argsOf, targetOf } from '../../common/tools/tool-spec';
import { withActivatedSkills } from './active-skills';
import { type CallPoint, runnerOf } from './extensions';
import type { ModelCaller } from './model-calls';
import { runToolCall, type SessionToolSet, toolSummary, truncateArguments } from './tool-calls';
import type { TurnInput } from './turn';
import { INTERRUPTED_RESULT, toolMessage } from './turn-messages';

/**
 * Sessions whose writes to one target in one reply run one after the other. Before, every call of a
 * reply ran at once, so two changes of one file (an append, then an edit of its front matter) each
 * read the old file and the last to finish won. The patch is asked for only when a reply has such
 * writes: other replies schedule exactly what they did before, and a history recorded before the
 * patch replays them in parallel, as they ran.
 */
export const SERIAL_WRITES_PATCH = 'loopwright-serial-writes';

/**
 * Replies with more reads than `MAX_LOCAL_READS_PER_REPLY` run the rest as normal activities. Local
 * activities' results travel in the workflow task's completion, which the server takes up to 4 MB;
 * forty reads of a few hundred KB in one reply passed that and failed the session. Normal activities'
 * results arrive as events of their own.
 */
export const LOCAL_READ_CAP_PATCH = 'loopwright-local-read-cap';
/** Reads one reply runs as local activities, at most: with results of up to 1 MB each, under the 4 MB a completion may carry. */
export const MAX_LOCAL_READS_PER_REPLY = 3;

/**
 * For each call of a reply, the index of the earlier call it must wait for, or -1: the last call
 * before it of a tool that writes (`access: 'write'`) with the same target argument, as the model
 * wrote it after trimming (`{output_folder}/prd.md`; a target spelled two ways is not matched).
 * Reads, calls without a target and writes to other targets wait for nothing.
 */
export function sameTargetWrites(calls: readonly ToolCall[], specs: readonly SessionTool[]): number[] {
  const lastWrite = new Map<string, number>();
  return calls.map((call, i) => {
    const spec = toolSpec(call.function.name, specs);
    if (spec?.access !== 'write') return -1;
    const target = targetOf(spec, argsOf(call))?.trim();
    if (target === undefined || target === '') return -1;
    const before = lastWrite.get(target) ?? -1;
    lastWrite.set(target, i);
    return before;
  });
}

/**
 * Run every call of one assistant message at once and append the results in tool-call order once
 * all are in; a write to a target an earlier call of the reply also writes starts once that call
 * has its result (`sameTargetWrites`, behind `SERIAL_WRITES_PATCH`); its approval is still asked
 * at once. On interruption the results that did arrive are kept and every call still running is
 * answered with an "interrupted" result, all in call order, so the transcript stays valid. A
 * completion breaker gets its result in order too; a question breaker is answered by the user's
 * next message.
 */
export function runToolCalls(input: TurnInput, calls: ToolCall[], breaker: ToolCall | undefined, at: CallPoint, inlined?: (ToolResult | null)[]): Promise<(ToolResult | undefined)[]> {
  input.observer.onTools(calls.map((c) => ({ id: c.id, name: c.function.name, ...mainArgument(c, input.toolSet) })));
  const results: (ToolResult | undefined)[] = calls.map(() => undefined);
  const settle = (): void => {
    calls.forEach((call, i) => {
      input.transcript.push(toolMessage(call.id, results[i] ?? INTERRUPTED_RESULT));
    });
    noteActivatedSkills(input, calls, results);
    if (breaker && loopToolSpec(breaker.function.name)?.loop === 'completion') input.transcript.push(toolMessage(breaker.id, { success: true, completed: true }));
    input.observer.onTools([]);
  };
  // Only a reply with two writes to one target asks for the patch (and records its marker).
  const waits = calls.length > 1 ? sameTargetWrites(calls, input.toolSet?.tools ?? TOOL_SPECS) : undefined;
  const serial = waits !== undefined && waits.some((w) => w >= 0) && patched(SERIAL_WRITES_PATCH);
  // Only a reply with more local reads than the cap asks for the patch (and records its marker).
  const remote = localReadsOverCap(input, calls);
  const done: Promise<void>[] = [];
  // Promise chains, not async functions: every workflow promise costs a recorded stack trace (see runToolCall).
  const one = (call: ToolCall, i: number): Promise<void> => {
    const started = Date.now();
    let running: Promise<ToolResult>;
    const ran = inlined?.[i];
    // A cancelled earlier write rejects this one too, without starting it.
    const after = serial && waits[i]! >= 0 ? done[waits[i]!] : undefined;
    try {
      running = ran ? Promise.resolve(ran) : runOneCall(input, call, at, after, remote?.has(i) === true);
    } catch (err) {
      running = Promise.reject(err);
    }
    const settled = running.then((result) => {
      results[i] = result;
      if (!result.success) {
        log.info('Tool call failed', { tool: call.function.name, arguments: truncateArguments(call.function.arguments), error: result.error, durationMs: Date.now() - started });
      }
    });
    done[i] = settled;
    return settled;
  };
  const all = calls.length === 1 ? one(calls[0]!, 0) : Promise.all(calls.map(one));
  return all.then(
    () => {
      settle();
      return results;
    },
    (err: unknown) => {
      settle();
      throw err;
    },
  );
}

/** Results the model-call activity already has (inline reads), appended in call order like any others. */
export function settleInline(input: TurnInput, calls: ToolCall[], results: ToolResult[], caller: ModelCaller): ToolResult[] {
  const said = calls.map((call) => toolSummary(call.function.name, argsOf(call), input.toolSet?.tools)).join(', ');
  caller.afterInline = said.length > INLINE_NOTE_CHARS ? `${said.slice(0, INLINE_NOTE_CHARS)}…` : said;
  calls.forEach((call, i) => {
    const result = results[i]!;
    if (!result.success) log.info('Tool call failed', { tool: call.function.name, arguments: truncateArguments(call.function.arguments), error: result.error, inline: true });
    input.transcript.push(toolMessage(call.id, result));
  });
  noteActivatedSkills(input, calls, results);
  return results;
}

/** Skills activated by this reply become the session's active skills (see active-skills.ts). */
function noteActivatedSkills(input: TurnInput, calls: ToolCall[], results: readonly (ToolResult | undefined)[]): void {
  const context = withActivatedSkills(input.context, calls, results);
  if (context === input.context) return;
  input.context = context;
  input.observer.onContext?.(context);
}

/**
 * One call (unless the session's rules refuse it without asking): after the human's yes when it needs one, by the extension that runs it (a child session
 * for a delegation), else as its tool's activity; once `after` (an earlier write to the same target) has settled, when given.
 */
function runOneCall(input: TurnInput, call: ToolCall, at: CallPoint, after?: Promise<void>, notLocal = false): Promise<ToolResult> {
  const runner = runnerOf(input.extensions, call);
  const localReads = input.localReads === true && !notLocal;
  const start = (): Promise<ToolResult> => (runner ? runner.runCall!(call, at) : runToolCall(input.activities, call, input.context, { localReads, toolSet: input.toolSet }));
  const run = after === undefined ? start : (): Promise<ToolResult> => after.then(start);
  const approvals = input.approvals;
  const refused = approvals?.refused?.(call);
  if (refused) return Promise.resolve(refused);
  if (!approvals?.needsApproval(call)) return run();
  return approvals
    .requestApproval(call)
    .then((decision): ToolResult | Promise<ToolResult> =>
      decision.approved ? run() : { success: false, declined: true, error: `The user declined this call${decision.reason ? `: ${decision.reason}` : ''}` },
    );
}

/** The argument a person recognises a call by (its tool's `target`, a path), for progress displays. */
function mainArgument(call: ToolCall, toolSet: SessionToolSet | undefined): { detail?: string } {
  const detail = targetOf(toolSpec(call.function.name, toolSet?.tools ?? TOOL_SPECS), argsOf(call));
  return detail !== undefined ? { detail: detail.slice(0, 200) } : {};
}

/** Longest Web UI note of a reply's inline reads. */
const INLINE_NOTE_CHARS = 240;

/**
 * The indexes of the calls past the first `MAX_LOCAL_READS_PER_REPLY` that would run as local
 * reads (read tools of the session, no extension running them), to run as normal activities; undefined
 * when the reply has no more than that, or in a run recorded before the cap.
 */
function localReadsOverCap(input: TurnInput, calls: readonly ToolCall[]): Set<number> | undefined {
  if (input.localReads !== true || calls.length <= MAX_LOCAL_READS_PER_REPLY) return undefined;
  const specs = input.toolSet?.tools ?? TOOL_SPECS;
  const local = calls.flatMap((call, i) => (toolSpec(call.function.name, specs)?.access === 'read' && runnerOf(input.extensions, call) === undefined ? [i] : []));
  if (local.length <= MAX_LOCAL_READS_PER_REPLY || !patched(LOCAL_READ_CAP_PATCH)) return undefined;
  return new Set(local.slice(MAX_LOCAL_READS_PER_REPLY));
}
