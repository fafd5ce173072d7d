/**
 * What the model-call activity keeps per session run, so that the workflow need not send it with
 * every call: the run's runtime context (for inline reads) and its tool definitions by key. Least
 * recently used runs go first; a miss is never fatal: the workflow is told and sends them again.
 */
import type { ToolDefinition } from '../../common/messages';
import type { RuntimeContext } from '../../common/runtime-context';

/** What one run left with this worker. */
interface RunEntry {
  context?: RuntimeContext;
  /** Tool definitions by key (a run's set changes rarely: a few keys at most). */
  tools: Map<string, ToolDefinition[]>;
}

/** Default number of runs kept. */
export const DEFAULT_RUNS_KEPT = 2000;

/** Largest number of tool sets kept for one run. */
const TOOL_SETS_PER_RUN = 4;

export class RunCache {
  private readonly runs = new Map<string, RunEntry>();

  constructor(private readonly maxRuns = DEFAULT_RUNS_KEPT) {}

  /** The runtime context kept for `run`, if any. */
  context(run: RunRef): RuntimeContext | undefined {
    return this.entry(run, false)?.context;
  }

  setContext(run: RunRef, context: RuntimeContext): void {
    this.entry(run, true)!.context = context;
  }

  /** The tool definitions kept for `run` under `key`, if any. */
  tools(run: RunRef, key: string): ToolDefinition[] | undefined {
    return this.entry(run, false)?.tools.get(key);
  }

  setTools(run: RunRef, key: string, tools: ToolDefinition[]): void {
    const sets = this.entry(run, true)!.tools;
    sets.delete(key);
    sets.set(key, tools);
    if (sets.size > TOOL_SETS_PER_RUN) sets.delete(sets.keys().next().value!);
  }

  /** The entry of `run`, now the most recently used; created when `create`. */
  private entry(run: RunRef, create: boolean): RunEntry | undefined {
    const key = `${run.workflowId}\u0000${run.runId}`;
    let entry = this.runs.get(key);
    if (entry) this.runs.delete(key);
    else if (create) entry = { tools: new Map() };
    else return undefined;
    this.runs.set(key, entry);
    if (this.runs.size > this.maxRuns) this.runs.delete(this.runs.keys().next().value!);
    return entry;
  }
}

/** A session run. */
export interface RunRef {
  workflowId: string;
  runId: string;
}
