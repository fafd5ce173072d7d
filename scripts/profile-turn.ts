/**
 * `node --cpu-prof -r ts-node/register/transpile-only scripts/profile-turn.ts [turns] [iterations]`
 * (LOOPWRIGHT_PROFILE_WORKER_OPTIONS: worker options as JSON, to measure an SDK setting):
 * durable bench turns (zero-latency fake model, worker in this process) run back to back, so a CPU
 * profile of this process shows where the worker's time goes per iteration. Prints the worker's
 * CPU per iteration during the turns and their median time.
 */
import { DefaultLogger, Runtime, type WorkerOptions } from '@temporalio/worker';
import { benchTurnMessage } from './bench/bench-responder';
import { EXAMPLE_AGENT, prepareBenchBundle, SMALL_FILE } from './bench/bench-bundle';
import { startBenchServer } from './bench/bench-server';
import { CleanupStack } from './bench/cleanup-stack';
import { startDurableBench } from './bench/durable-loop';
import { startModelProcess } from './bench/model-process';
import { median } from './bench/stats';

async function main(turns: number, iterations: number, cleanup: CleanupStack): Promise<void> {
  // LOOPWRIGHT_PROFILE_WORKER_OPTIONS='{"reuseV8Context":false}' measures an SDK setting.
  const workerOptions = JSON.parse(process.env.LOOPWRIGHT_PROFILE_WORKER_OPTIONS ?? '{}') as Partial<WorkerOptions>;
  Runtime.install({ logger: new DefaultLogger('WARN'), telemetryOptions: { logging: { forward: {}, filter: { core: 'WARN', other: 'ERROR' } } } });
  const bundle = prepareBenchBundle(cleanup);
  const server = await startBenchServer(cleanup);
  // The model server in a process of its own: this process's profile is the worker's alone.
  const fake = await startModelProcess(cleanup);
  const durable = await startDurableBench(
    { bundlePath: bundle.bundlePath, agentId: EXAMPLE_AGENT, modelBaseURL: fake.baseURL, model: 'bench-model', turnTimeoutMs: 120_000, workerOptions },
    server,
    cleanup,
  );
  const message = benchTurnMessage(iterations, SMALL_FILE);
  await durable.runTurn(message, iterations);
  const times: number[] = [];
  const from = process.hrtime.bigint() / 1000n;
  let cpuMs = 0;
  for (let i = 0; i < turns; i++) {
    const turn = await durable.runTurn(message, iterations);
    times.push(turn.ms);
    cpuMs += turn.cpuMs;
  }
  // Monotonic microseconds, the clock of a .cpuprofile's timestamps: the timed window to analyse.
  process.stdout.write(`timed window (us): ${from} ${process.hrtime.bigint() / 1000n}\n`);
  process.stdout.write(
    `turn median ${median(times).toFixed(1)} ms (${(median(times) / iterations).toFixed(2)} ms/it); ` + `worker CPU ${(cpuMs / (turns * iterations)).toFixed(2)} ms/it (from send to result)\n`,
  );
}

const cleanup = new CleanupStack();
main(Number(process.argv[2] ?? 10), Number(process.argv[3] ?? 50), cleanup)
  .catch((err) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exitCode = 1;
  })
  .finally(() => void cleanup.run());
