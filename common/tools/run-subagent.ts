/**
 * The `run_subagent` tool: start a subagent from instructions the caller gives (text, or a file such
 * as a skill's `agents/web-researcher.md`) with one task. Today's skills dispatch reviewers and
 * researchers this way ("spawn web-research subagents"). No activity runs it: the workflow starts a
 * child session of the same project (`workflows/delegation/delegation.ts`), whose agent is made of
 * those instructions, with its own context; its final reply, a digest, is the call's result. Several
 * calls in one reply run at once. Offered where skills are (Agent Skills projects) and delegation is on.
 */
import { defineTool } from './tool-spec';

export const RUN_SUBAGENT = defineTool({
  name: 'run_subagent',
  description:
    "Start a subagent with its own instructions and context to do one task, and get its final report back as this call's result. Give instructions (its role and how to work) as text or as instructions_file (e.g. a skill's agents/*.md), and a complete, self-contained task: it does not see this conversation. Several calls in one reply run in parallel.",
  parameters: {
    task: { type: 'string', nonEmpty: true, description: 'The task, with every fact, file path and expectation the subagent needs, and what its report must contain' },
    instructions: { type: 'string', optional: true, description: 'Who the subagent is and how it works (its system instructions)' },
    instructions_file: { type: 'string', optional: true, description: 'A file holding its instructions instead, e.g. {project-root}/.claude/skills/x/agents/reviewer.md' },
    name: { type: 'string', optional: true, description: 'A short name for it, e.g. security-reviewer (default: the file name, or subagent)' },
  },
  // Starting a subagent changes nothing by itself: what it writes waits for its own approvals.
  access: 'read',
  target: 'name',
  retries: 'persistent',
  promptRules: [
    '- When a skill says to dispatch or spawn subagents, call run_subagent once per subagent, all in one reply so they run in parallel, each with its instructions (or instructions_file) and a complete task; use the reports that come back.',
  ],
});
