/**
 * The `run_command` tool: a shell line in the project, in the command sandbox (activities/commands/,
 * bubblewrap), for sessions that turn commands on. Path variables in the line and the folder are
 * filled in from the session's variables; the project is read-only but for the command's write roots
 * (the session's, and a BMAD config's artifact folders: `command-write-roots.ts`; protected paths
 * read-only again, secret files hidden), with no network unless the session allows it and no
 * credentials in the environment. The worker's uv is offered with the machine's Python, offline
 * unless the network is allowed (`uv-tool.ts`), so a skill's `uv run <script.py>` runs as written.
 * The command's own failure (an exit status, a timeout, output past the limit) is a result the
 * model reads; a sandbox that cannot be made, or a uv the worker lacks, is a result
 * saying why and how to fix it. A command a deny rule covers (common/commands/command-rules.ts) is
 * refused here too, though the workflow refuses it before asking.
 */
import { promises as fs } from 'node:fs';
import type { ToolResult } from '../../common/messages';
import type { RuntimeContext } from '../../common/runtime-context';
import { RUN_COMMAND } from '../../common/tools/run-command';
import { resolveVariables } from '../../bundle/variables';
import { secretOptionsOf } from '../../bundle/sandbox/secret-files';
import { CheckedDir } from '../../bundle/sandbox/dir-handle';
import { runSandboxed } from '../commands/sandbox-runner';
import { CommandSandboxError, UvNotFoundError } from '../commands/sandbox-errors';
import type { SandboxResult } from '../commands/sandbox-request';
import { findUv, installUvHint, saysUvNotFound, systemPython, type UvLocation, uvEnvironment, uvInToolsFolder, uvTools } from '../commands/uv-tool';
import { commandWriteRoots } from './command-write-roots';
import type { ToolActivity, ToolImplementation, ToolRunOptions } from './activity-wrapper';
import { type CommandRules, judgeCommand, refusalMessage } from '../../common/commands/command-rules';
import { shellWord } from '../../common/commands/command-line';
import { parseArgsOf } from './parse-args';
import { toToolFailure } from './tool-failure';

/** Output of each stream a result carries (the sandbox ends a command that writes more). */
export const COMMAND_OUTPUT_BYTES = 64 * 1024;

/** Runs `run_command` for the session `ctx`; refuses when the session has commands off. */
export async function runCommandTool(ctx: RuntimeContext, args: unknown, options: ToolRunOptions = {}): Promise<ToolResult> {
  const parsed = parseArgsOf(RUN_COMMAND, args);
  if (!parsed.ok) return { success: false, error: parsed.error };
  const settings = ctx.commands;
  if (!settings) return { success: false, error: `${RUN_COMMAND.name} is not offered in this session: commands are off (commands.enabled, --commands)` };
  const command = resolveVariables(parsed.value.command, shellVariables(ctx.variables));
  const cwd = parsed.value.cwd === undefined ? undefined : resolveVariables(parsed.value.cwd, ctx.variables);
  // The workflow refuses a denied command without asking; checked again here, on the line as it runs.
  const refused = deniedResult(parsed.value.command, command, settings.rules, ctx.variables);
  if (refused) return refused;
  try {
    const writeRoots = await commandWriteRoots(ctx);
    await createMissingWriteRoots(ctx, writeRoots);
    const uv = await findUv();
    const python = await systemPython();
    const result = await runSandboxed({
      command: { shell: command },
      projectRoot: ctx.projectRoot,
      writeRoots,
      ...(cwd !== undefined ? { cwd } : {}),
      env: uvEnvironment({ network: settings.network, ...(python !== undefined ? { python } : {}) }),
      tools: uv !== undefined ? uvTools(uv) : [],
      network: settings.network,
      allowUnsandboxed: settings.allowUnsandboxed,
      timeoutMs: settings.timeoutMs,
      maxOutputBytes: COMMAND_OUTPUT_BYTES,
      ...(ctx.protectedPaths ? { readOnlyPaths: ctx.protectedPaths } : {}),
      ...secretOptionsOf(ctx),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.progress ? { onOutput: liveOutput(parsed.value.command, options.progress) } : {}),
    });
    const noUv = saysUvNotFound(result.stderr) ? uvMissing(uv, result) : undefined;
    const ended = result.timedOut
      ? `it ran past its ${settings.timeoutMs / 1000} s and was ended`
      : result.outputLimited
        ? `its output passed ${COMMAND_OUTPUT_BYTES} bytes and it was ended`
        : result.signal
          ? `it was ended by ${result.signal}`
          : undefined;
    return {
      success: result.exitCode === 0 && !result.killed,
      command,
      exitCode: result.exitCode,
      ...(result.signal ? { signal: result.signal } : {}),
      stdout: result.stdout,
      stderr: result.stderr,
      ...(result.stdoutTruncated || result.stderrTruncated ? { truncated: true } : {}),
      sandboxed: result.sandboxed,
      durationMs: result.durationMs,
      ...(ended ? { error: `The command did not finish: ${ended}` } : result.exitCode !== 0 ? { error: `The command exited with status ${result.exitCode}` } : {}),
      ...(noUv ? { success: false, errorType: noUv.name, error: noUv.message } : {}),
    };
  } catch (err) {
    // A request the sandbox refuses (no sandbox on this machine, a variable it will not pass) is the
    // operator's or the model's to fix; a folder outside the roots is the path guard's refusal, which
    // names no path.
    if (err instanceof CommandSandboxError) return { success: false, command, errorType: err.name, error: err.message };
    return { ...toToolFailure(err), command };
  }
}

/** Most of a command's output its heartbeat carries: the tail a live view shows (the result has the whole, bounded). */
export const LIVE_OUTPUT_BYTES = 4 * 1024;

/** How often, at most, new output is reported (the SDK sends heartbeats no faster than its throttle anyway). */
const LIVE_OUTPUT_INTERVAL_MS = 100;

/**
 * Reports the command's output as it comes (both streams, in arrival order) through `progress`: the
 * last `LIVE_OUTPUT_BYTES` and the count of all bytes, at most every `LIVE_OUTPUT_INTERVAL_MS`, and
 * at once for the first output. Heartbeat details are kept only while the activity runs, outside history.
 */
function liveOutput(target: string, progress: NonNullable<ToolRunOptions['progress']>): (stream: 'stdout' | 'stderr', chunk: Buffer) => void {
  let tail = Buffer.alloc(0);
  let bytes = 0;
  let last = 0;
  let pending: NodeJS.Timeout | undefined;
  const send = (): void => {
    pending = undefined;
    last = performance.now();
    progress({ kind: 'tool_progress', target, output: tail.toString('utf8').replace(/^\uFFFD+/, ''), bytes });
  };
  return (_stream, chunk) => {
    bytes += chunk.length;
    tail = Buffer.concat([tail, chunk]);
    if (tail.length > LIVE_OUTPUT_BYTES) tail = tail.subarray(tail.length - LIVE_OUTPUT_BYTES);
    if (pending !== undefined) return;
    const wait = last === 0 ? 0 : Math.max(0, LIVE_OUTPUT_INTERVAL_MS - (performance.now() - last));
    if (wait === 0) send();
    else pending = setTimeout(send, wait).unref();
  };
}

/**
 * The session's variables as they go into a shell line: a value with nothing the shell would read
 * differently (a plain path) as it is, so it can also stand inside the model's own quotes; any
 * other value single-quoted, so a folder named `a b` or `$x;y` stays one word and runs nothing
 * (`shellWord`, which the approval's view of the line uses too).
 */
function shellVariables(variables: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(variables).map(([name, value]) => [name, shellWord(value)]));
}

/**
 * The result of a command a deny rule covers (as written, or as it runs), naming the rule; undefined
 * when none does. Nothing runs.
 */
function deniedResult(written: string, command: string, rules: CommandRules | undefined, variables: Record<string, string>): ToolResult | undefined {
  if (!rules?.deny) return undefined;
  for (const line of new Set([written, command])) {
    const verdict = judgeCommand(line, { deny: rules.deny }, variables);
    if (verdict.verdict === 'deny') return { success: false, command, refused: true, error: refusalMessage(verdict) };
  }
  return undefined;
}

/**
 * `run_command`'s activity refusing, before anything else, a command one of `rules`' deny rules
 * covers: the worker's own rules (`loopwright worker --deny-command`), whoever initialised the session.
 */
export function refusingDenied(rules: CommandRules, activity: ToolActivity): ToolActivity {
  return async (ctx, args) => {
    const parsed = parseArgsOf(RUN_COMMAND, args);
    if (parsed.ok) {
      const variables = ctx?.variables ?? {};
      const refused = deniedResult(parsed.value.command, resolveVariables(parsed.value.command, shellVariables(variables)), rules, variables);
      if (refused) return refused;
    }
    return activity(ctx, args);
  };
}

/**
 * Why the shell found no uv, when the worker had none to offer or the sandbox left it out (a uv
 * it offered that is then "not found" is the command's own doing: no error of ours).
 */
function uvMissing(uv: UvLocation | undefined, result: SandboxResult): UvNotFoundError | undefined {
  const leftOut = result.toolsLeftOut.find((tool) => tool.name === 'uv');
  if (uv !== undefined && leftOut === undefined) return undefined;
  const reason = leftOut?.reason ?? `none was found in the tools folder (${uvInToolsFolder()}) nor on the worker's PATH`;
  return new UvNotFoundError(reason, installUvHint());
}

/**
 * Creates the command's write roots that do not exist yet (an output folder before its first
 * document), as `save_output` would, through checked folder opens: the sandbox mounts only folders
 * that exist. A worker run as root gives them to the project's owner, whom the command runs as.
 */
async function createMissingWriteRoots(ctx: RuntimeContext, writeRoots: readonly string[]): Promise<void> {
  for (const root of writeRoots) {
    if (
      await fs.stat(root).then(
        () => true,
        () => false,
      )
    )
      continue;
    const dir = await CheckedDir.open(root, root, { create: true });
    try {
      if (process.getuid?.() === 0) {
        const owner = await fs.stat(ctx.projectRoot);
        if (owner.uid !== 0) await fs.lchown(root, owner.uid, owner.gid);
      }
    } finally {
      await dir.close();
    }
  }
}

export const runCommand: ToolImplementation = { spec: RUN_COMMAND, run: runCommandTool };
