/**
 * A batch from a JSONL file: one one-shot session per line of items.jsonl (a JSON string, or
 * `{"id", "message"}`), a few at a time, as a durable `agentBatch` workflow. The worker writes one
 * result line per item to the result file as items finish; this program waits for the summary and
 * prints the results. Running it again with the same batch id reattaches instead of starting over.
 * It needs a Temporal server and a worker on this machine (the worker reads and writes the files).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { BatchInputError, type BatchResultLine, DEFAULT_TASK_QUEUE, LoopwrightClient } from 'loopwright';

async function main(): Promise<void> {
  const input = path.resolve(process.argv[2] ?? path.join(__dirname, 'items.jsonl'));
  // A scratch folder for the result file and for any document the agent saves (its project).
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'loopwright-batch-'));
  const output = path.join(work, 'results.jsonl');

  const config = loadClientConnectConfig();
  const connection = await Connection.connect(config.connectionOptions);
  const loopwright = new LoopwrightClient(new Client({ connection, namespace: config.namespace }), process.env.LOOPWRIGHT_TASK_QUEUE ?? DEFAULT_TASK_QUEUE);
  const bundlePath = path.join(path.dirname(require.resolve('loopwright/package.json')), 'bundles', 'requirements-facilitator');

  // The whole file is checked before anything starts: a bad line is a BatchInputError naming it.
  const batch = await loopwright
    .startBatch({ bundlePath, agentId: 'facilitator', projectRoot: work, inputPath: input, outputPath: output, concurrency: 2, maxIterations: 10 })
    .catch((error: unknown) => {
      if (error instanceof BatchInputError) console.error(`${input}: ${error.message}`);
      throw error;
    });
  console.log(`Batch ${batch.workflowId} started: ${input} → ${output}`);

  // While it runs, its state can be read at any time (items, started, ok, failed, tokens).
  const state = await batch.state();
  console.log(`${state.total} item(s), ${state.started} started so far`);

  const summary = await batch.result();
  console.log(`Done: ${summary.ok} ok, ${summary.failed} failed of ${summary.total}, in ${summary.runs} run(s)`);
  const lines = fs
    .readFileSync(summary.outputPath, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as BatchResultLine);
  for (const line of lines.sort((a, b) => a.index - b.index)) {
    console.log(`  #${line.index}${line.id ? ` ${line.id}` : ''} ${line.status}: ${(line.response ?? line.error ?? '').slice(0, 100)}`);
  }
  await connection.close();
  if (summary.failed > 0) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
