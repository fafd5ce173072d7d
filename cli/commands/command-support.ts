/**
 * What the session commands share: the `--json` option, a connection for one command, one update
 * run and printed, the notice that a command runs a worker of its own, and Web UI links.
 */
import { withWorker } from '../in-process-worker';
import { EXIT } from '../exit-codes';
import type { CommandOutput } from '../output';
import type { SessionHandle } from '../../client/session-client';
import { openTemporal, type TemporalSession } from '../temporal-session';

/** Options of commands that print one JSON object with `--json`. */
export interface JsonOption {
  json?: boolean;
}

/**
 * Run one update on a session (a worker is run here if none answers) and print its outcome: a line,
 * or with --json `{workflowId, ...fields}`. A refusal is thrown (the command line reports it, exit 1).
 */
export async function updateCommand<T>(
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
export async function withSession(out: CommandOutput, fn: (temporal: TemporalSession) => Promise<number>): Promise<number> {
  const temporal = await openTemporal(out);
  try {
    return await fn(temporal);
  } finally {
    await temporal.close();
  }
}

/** Says on stderr (never in --json output) that the command runs a worker of its own, and why. */
export function workerNotice(out: CommandOutput, json: boolean): (reason: string) => void {
  return (reason) => {
    if (!json) out.error(`  (${reason}; running one in this process)`);
  };
}

/** Link to a session's history in the Temporal Web UI. */
export function webUiLink(temporal: Pick<TemporalSession, 'uiUrl' | 'namespace'>, workflowId: string): string {
  return `${temporal.uiUrl}/namespaces/${encodeURIComponent(temporal.namespace)}/workflows/${encodeURIComponent(workflowId)}`;
}
