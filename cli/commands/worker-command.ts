/**
 * `loopwright worker`: a long-lived worker for the task queue. The first SIGINT or SIGTERM shuts it
 * down gracefully (running activities get the grace period to finish); a second one exits at once.
 * (The SDK runtime's own signal handlers are off: see exit-on-signal.ts.)
 */
import os from 'node:os';
import { createWorker } from '../../worker/create-worker';
import { onSignalGracefully } from '../exit-on-signal';
import type { CommandOutput } from '../output';
import { installRuntimeLogging } from '../runtime-logging';
import { openTemporal } from '../temporal-session';
import { shutdownTracing } from '../../worker/tracing';
import { closeDefaultMcpPool } from '../../activities/mcp/default-pool';
import { CustomToolError } from '../../activities/tools/custom-tool';
import { loadToolModules, ToolModuleError, toolModulesFromEnv } from '../../worker/tool-modules';
import { loadScorerModules, scorerModulesFromEnv } from '../../worker/scorer-modules';
import { ScorerError } from '../../activities/eval/scorers';

/** The worker's options, as commander parsed them. */
export interface WorkerOptions {
  taskQueue?: string;
  toolModule?: string[];
  /** `--scorer-module`: custom scorers for evals (`defineScorer`). */
  scorerModule?: string[];
  /** The operator's command rules for every session this worker starts (`--allow-command`, `--deny-command`). */
  allowCommand?: string[];
  denyCommand?: string[];
}

export async function workerCommand(options: WorkerOptions, out: CommandOutput): Promise<number> {
  // Tool modules load before any connection: a bad one is a usage error naming it.
  let tools;
  let scorers;
  try {
    tools = await loadToolModules([...toolModulesFromEnv(), ...(options.toolModule ?? [])]);
    scorers = await loadScorerModules([...scorerModulesFromEnv(), ...(options.scorerModule ?? [])]);
  } catch (err) {
    if (!(err instanceof ToolModuleError || err instanceof CustomToolError || err instanceof ScorerError)) throw err;
    out.error(`loopwright worker: ${err.message}`);
    return 2;
  }
  installRuntimeLogging('INFO');
  const temporal = await openTemporal(out, { taskQueue: options.taskQueue });
  const connection = await temporal.nativeConnection();
  try {
    const worker = await createWorker({
      connection,
      namespace: temporal.namespace,
      taskQueue: temporal.taskQueue,
      tools,
      scorers,
      ...(options.allowCommand || options.denyCommand ? { activityOptions: { commandRules: { allow: options.allowCommand, deny: options.denyCommand } } } : {}),
      overrides: { identity: `loopwright-worker-${process.pid}@${os.hostname()}` },
    });
    if (tools.length > 0) out.error(`Custom tools: ${tools.map((t) => t.name).join(', ')}`);
    if (scorers.length > 0) out.error(`Scorers: ${scorers.map((s) => s.name).join(', ')}`);
    if (options.allowCommand) out.error(`Commands allowed in every session: ${options.allowCommand.map((p) => JSON.stringify(p)).join(', ')}`);
    if (options.denyCommand) out.error(`Commands refused in every session: ${options.denyCommand.map((p) => JSON.stringify(p)).join(', ')}`);
    out.error(`Worker polling task queue "${temporal.taskQueue}" on ${temporal.target.address} (namespace ${temporal.namespace}); Ctrl-C to stop`);
    const running = worker.run();
    const release = onSignalGracefully((signal) => {
      out.error(`${signal}: stopping the worker once running tasks finish (again to exit at once)`);
      if (worker.getState() === 'RUNNING') worker.shutdown();
    });
    try {
      await running;
    } finally {
      release();
    }
    out.error('Worker stopped');
    return 0;
  } finally {
    await closeDefaultMcpPool();
    await connection.close();
    await temporal.close();
    // Send the spans still waiting in the batch (when OTEL_* turned tracing on).
    await shutdownTracing();
  }
}
