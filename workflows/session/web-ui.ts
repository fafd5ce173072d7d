/**
 * What the Temporal Web UI shows of a session while it runs: the "current details" markdown (never
 * whole contents) and the Loopwright* search attributes, upserted only when they change.
 */
import { upsertSearchAttributes } from '@temporalio/workflow';
import { AGENT_ATTRIBUTE, BUNDLE_ATTRIBUTE, STATUS_ATTRIBUTE, TOKENS_ATTRIBUTE, TURNS_ATTRIBUTE } from '../../common/search-attributes';
import type { OfferedToolSummary, SessionInput, SessionState } from '../../common/session-types';
import { verificationLine } from '../../common/verify-report';

/** The session's live details, in markdown. */
export function sessionDetails(state: SessionState): string {
  const lines = [`**${state.status.replace(/_/g, ' ')}** · turn ${state.turn} · iteration ${state.iteration}/${state.maxIterations} · run ${state.run} · ${state.usage.totalTokens} tokens`];
  if (state.agent) lines.push(`agent: ${state.agent.name} (${state.agent.title})`);
  if (state.tools) lines.push(toolsLine(state.tools));
  for (const change of state.bundleChanges ?? []) lines.push(`**changed on disk**: ${change}`);
  if (state.waitingForFiles)
    lines.push(
      `**waiting for files**: no worker of host \`${state.waitingForFiles.host}\` (which holds the bundle and project) has taken a file tool since ${state.waitingForFiles.since}; start one there`,
    );
  for (const tool of state.runningTools) lines.push(`running: \`${tool.name}\`${tool.detail ? ` ${tool.detail}` : ''}`);
  for (const p of state.pendingApprovals) lines.push(`waiting for approval: \`${p.tool}\` ${p.path ?? ''} (call ${p.callId}${p.delegate ? `, asked by ${p.delegate.agent}` : ''})`);
  if (state.pendingQuestion) lines.push(`question for the user: ${state.pendingQuestion.question.slice(0, 200)}`);
  if (state.lastTurn && state.lastTurn.status !== 'completed')
    lines.push(`last turn ${state.lastTurn.turn}: **${state.lastTurn.status.replace(/_/g, ' ')}**${state.lastTurn.error ? ` · ${state.lastTurn.error.slice(0, 200)}` : ''}`);
  const verify = state.verify;
  if (verify) {
    const p = verify.pending;
    lines.push(`phase: **${verify.phase}**${p ? ` · to verify: ${p.name ?? 'document'}${p.document ? ` (${p.document})` : ' (not saved yet)'} · attempt ${p.attempts} of ${p.maxAttempts}` : ''}`);
  }
  if (state.lastTurn?.verification) lines.push(`verification: ${verificationLine(state.lastTurn.verification)}`);
  if (state.lastTurn?.response) lines.push(`last reply: ${state.lastTurn.response.replace(/\s+/g, ' ').slice(0, 200)}`);
  const context = state.context;
  if (context) {
    const last = context.lastCompaction;
    lines.push(
      `context: ~${context.promptTokens} / ${context.window} tokens (${context.windowSource}) · ${context.viewMessages} of ${state.messageCount} messages in view · ${context.compactions} compactions` +
        (last ? ` · last: ${last.beforeTokens} → ${last.afterTokens} tokens in turn ${last.turn}${last.cachedTokensLost !== undefined ? ` (${last.cachedTokensLost} cached tokens lost)` : ''}` : ''),
    );
  }
  const budget = state.budget;
  if (budget) {
    const use = (label: string, u: { used: number; limit?: number }): string => `${label} ${u.used}${u.limit !== undefined ? `/${u.limit}` : ''}`;
    lines.push(`budget: ${use('turn tokens', budget.turnTokens)} · ${use('session tokens', budget.sessionTokens)} · ${use('cost', budget.cost)}`);
    for (const warning of budget.warnings ?? []) lines.push(`budget warning: ${warning}`);
  }
  if (state.error) lines.push(`error: ${state.error}`);
  return lines.join('\n\n');
}

/** What the session offers: `tools: 3 built-in · 1 custom (get_weather) · 17 MCP (fs, everything) · 4 need approval`. */
export function toolsLine(tools: readonly OfferedToolSummary[]): string {
  const of = (kind: OfferedToolSummary['kind']) => tools.filter((t) => t.kind === kind);
  const custom = of('custom');
  const mcp = of('mcp');
  const servers = [...new Set(mcp.map((t) => t.server ?? '?'))];
  const approval = tools.filter((t) => t.approval === 'required').length;
  return [
    `tools: ${of('builtin').length} built-in`,
    ...(custom.length > 0
      ? [
          `${custom.length} custom (${custom
            .slice(0, 5)
            .map((t) => t.name)
            .join(', ')}${custom.length > 5 ? ', …' : ''})`,
        ]
      : []),
    ...(mcp.length > 0 ? [`${mcp.length} MCP (${servers.join(', ')})`] : []),
    ...(approval > 0 ? [`${approval} need approval`] : []),
  ].join(' · ');
}

/** A function that upserts the search attributes that changed since its last call. */
export function searchAttributeUpdater(input: SessionInput, state: SessionState): () => void {
  let indexed = '';
  return () => {
    const key = `${state.status}|${state.turn}|${state.usage.totalTokens}`;
    if (key === indexed) return;
    indexed = key;
    upsertSearchAttributes([
      { key: AGENT_ATTRIBUTE, value: input.agentId },
      { key: BUNDLE_ATTRIBUTE, value: input.bundlePath.split(/[\\/]/).filter(Boolean).pop() ?? input.bundlePath },
      { key: STATUS_ATTRIBUTE, value: state.status },
      { key: TURNS_ATTRIBUTE, value: state.turn },
      { key: TOKENS_ATTRIBUTE, value: state.usage.totalTokens },
    ]);
  };
}

/** The last segment of a bundle path (`bundles/x/` → `x`), as the session's static summary names it. */
export function bundleName(bundlePath: string): string {
  const parts = bundlePath.split(/[\\/]+/).filter((part) => part !== '');
  return parts[parts.length - 1] ?? bundlePath;
}
