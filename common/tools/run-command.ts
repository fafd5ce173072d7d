/**
 * The `run_command` tool: run a shell line in the project, inside the command sandbox
 * (activities/commands/: bubblewrap; the project read-only but for the write roots, no network
 * unless the session allows it, no credentials, limits on time, memory, processes and output).
 * Offered only to sessions that turn commands on (`commands.enabled`); every call waits for a
 * person's yes unless the session's command rules decide it (common/commands/command-rules.ts),
 * and a call whose worker was lost is not made again (it may or may not have taken
 * effect, and the result says so).
 */
import { defineTool } from './tool-spec';

export const RUN_COMMAND = defineTool({
  name: 'run_command',
  description:
    'Run a shell command line in the project (for example a script a skill names: uv run {project-root}/_bmad/scripts/resolve_config.py --project-root {project-root}), in a sandbox: the project is read-only except the output folders, there is no network unless the session allows it, and no credentials. Returns the exit code and the output.',
  parameters: {
    command: { type: 'string', nonEmpty: true, description: 'The command line, as a shell would take it; {project-root} and the other path variables are filled in.' },
    cwd: { type: 'string', optional: true, description: 'The folder to run it in, relative to the project root (default: the project root).' },
  },
  access: 'write',
  target: 'command',
  retries: 'once',
  approval: 'required',
  offeredWhen: 'commands',
  promptRules: [
    "- To run a command or script (one a skill or workflow says to run), call the run_command tool with the command line; read its exit code and output before going on. A command waits for the user to approve it unless the session's rules allow it; one they refuse comes back refused, naming the rule: do not try to get round it.",
  ],
});
