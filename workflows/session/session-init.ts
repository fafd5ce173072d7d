/**
 * Agent initialisation of a new session, as an activity so its result is recorded: the system
 * prompt and critical actions (or a branched session's conversation) into the transcript, then
 * the session's tools. A failure fails the session, with the reason in its state.
 */
import { ApplicationFailure } from '@temporalio/workflow';
import { AGENT_INIT_FAILED } from '../../common/failure-types';
import { loadCarriedTranscript } from './carry-over';
import type { SessionRuntime } from './session-runtime';
import { refreshSessionTools } from './session-tools';
import { rootMessage } from '../turn/tool-calls';
import { bundleName } from './web-ui';
import { msToNumber } from '@temporalio/common/lib/time';
import { DEFAULT_COMMAND_TIMEOUT } from '../../common/defaults';
import type { CommandSettings } from '../../common/runtime-context';
import { mergeCommandRules, rulesFrom, SESSION_ALLOW_SOURCE, SESSION_DENY_SOURCE, SESSION_REPEATABLE_SOURCE } from '../../common/commands/command-rules';
import type { SessionInput } from '../../common/session-types';

export async function initializeSession(rt: SessionRuntime): Promise<NonNullable<SessionRuntime['init']>> {
  const { input, activities, transcript, state } = rt;
  try {
    // Named in the Web UI's event list like every other activity.
    const summary = `initializeAgent ${input.subagent ? `subagent ${input.subagent.name}` : input.agentId} · ${bundleName(input.bundlePath)}`;
    const result = await activities.initializeAgent.executeWithOptions({ summary }, [
      {
        bundlePath: input.bundlePath,
        agentId: input.agentId,
        outputRoots: input.outputRoots,
        ...(input.projectRoot !== undefined ? { projectRoot: input.projectRoot } : {}),
        ...(input.allowBroadProjectRoot ? { allowBroadProjectRoot: true } : {}),
        ...(input.userSkills ? { userSkills: true } : {}),
        ...(input.skillFolders !== undefined ? { skillFolders: input.skillFolders } : {}),
        ...(input.commands?.enabled ? { commands: commandSettings(input.commands) } : {}),
        ...(input.allowSecretFiles ? { allowSecretFiles: true } : {}),
        ...(input.secretFiles !== undefined ? { secretFiles: input.secretFiles } : {}),
        ...(input.allowHardLinks ? { allowHardLinks: true } : {}),
        ...(input.strict ? { strict: true } : {}),
        ...(input.subagent ? { subagent: input.subagent } : {}),
        // Whom the agent may delegate to: found by the same recorded activity.
        ...(rt.delegationApprovals && input.delegation?.enabled !== false ? { delegation: input.delegation?.agents ? { agents: input.delegation.agents } : {} } : {}),
      },
    ]);
    const { messages, warnings, ...rest } = result;
    if (input.branchFrom) {
      // A branch starts from the other session's conversation, its opening messages included.
      await loadCarriedTranscript(
        activities,
        { fromRunId: input.branchFrom.runId, fromWorkflowId: input.branchFrom.workflowId, transcript: { count: input.branchFrom.to, hash: input.branchFrom.hash } },
        transcript,
      );
      rt.transcriptLoading = false;
      state.turn = input.branchFrom.turns;
    } else {
      transcript.push(...messages);
    }
    rt.init = rest;
    if (warnings && warnings.length > 0) state.warnings = warnings;
    // Listing the tools puts the offered definitions into rt.init: that is the result.
    await refreshSessionTools(rt);
    return rt.init;
  } catch (err) {
    state.status = 'failed';
    state.error = rootMessage(err);
    rt.transcriptLoading = false;
    throw ApplicationFailure.create({
      type: AGENT_INIT_FAILED,
      message: `Agent initialisation failed: ${state.error}`,
      nonRetryable: true,
      cause: err instanceof Error ? err : undefined,
    });
  }
}

/**
 * How the command tool runs commands, from the session's settings (asked for only when they are
 * on), with the session's own command rules; initialisation adds the bundle's and the worker's.
 */
function commandSettings(commands: NonNullable<SessionInput['commands']>): CommandSettings {
  const rules = mergeCommandRules({
    allow: rulesFrom(commands.allow, SESSION_ALLOW_SOURCE),
    deny: rulesFrom(commands.deny, SESSION_DENY_SOURCE),
    repeatable: rulesFrom(commands.repeatable, SESSION_REPEATABLE_SOURCE),
  });
  return {
    network: commands.network === true,
    allowUnsandboxed: commands.allowUnsandboxed === true,
    timeoutMs: msToNumber((commands.timeout ?? DEFAULT_COMMAND_TIMEOUT) as Parameters<typeof msToNumber>[0]),
    ...(rules ? { rules } : {}),
  };
}
