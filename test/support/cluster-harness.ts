/**
 * Set-up of the cluster suite (test/cluster, `npm run test:cluster`): a real Temporal cluster
 * (scripts/cluster: PostgreSQL, frontend, two history hosts, matching, worker) in a fresh state
 * folder, the fake model, the test workflow bundle and in-process workers connected to the
 * cluster's frontend, so a test can kill one part of the cluster and watch sessions go on.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, type Worker, type WorkflowBundle } from '@temporalio/worker';
import { type FakeOpenAI, startFakeOpenAI } from '../../fake-model/server';
import { LoopwrightClient } from '../../client/session-client';
import { createWorker } from '../../worker/create-worker';
import { provisionClusterTools, TemporalCluster } from '../../scripts/cluster/temporal-cluster';
import type { ClusterProcess } from '../../scripts/cluster/cluster-config';
import { quietRuntime } from './session-harness';
import { closeNativeConnection } from '../../cli/temporal-session';
import { testWorkflowBundle } from './workflow-bundle';

/** What a cluster test file has once `startClusterHarness` resolved. */
export interface ClusterHarness {
  cluster: TemporalCluster;
  fake: FakeOpenAI;
  workflowBundle: WorkflowBundle;
  connection: Connection;
  client: Client;
  /** Start an in-process worker on `taskQueue` against the cluster; a client bound to that queue. */
  startWorker(taskQueue: string): Promise<{ worker: Worker; loopwright: LoopwrightClient; stop(): Promise<void> }>;
  /** SIGKILL one server process, then start it again on the same ports (a lost host that comes back). */
  killAndRestart(process: ClusterProcess, downMs?: number): Promise<void>;
  /** What a workflow waits on (its pending activities and children, and theirs), for a test that stopped moving. */
  stallReport(workflowId: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * A state folder under the system's temp folder: PostgreSQL runs as the `postgres` user when the
 * tests run as root, and that user must reach its data folder (a checkout under /root is closed to it).
 */
function clusterDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-cluster-'));
  fs.chmodSync(dir, 0o755);
  return dir;
}

/** Starts a cluster (building the server once, see scripts/setup-cluster.sh), the fake model and the bundle. */
export async function startClusterHarness(): Promise<ClusterHarness> {
  quietRuntime();
  const tools = provisionClusterTools();
  const cluster = new TemporalCluster(clusterDir());
  const [fake, workflowBundle] = await Promise.all([startFakeOpenAI(), testWorkflowBundle(), cluster.start(tools)]);
  const connection = await Connection.connect({ address: cluster.address });
  const client = new Client({ connection });
  const nativeConnection = await NativeConnection.connect({ address: cluster.address });
  const workers: { stop(): Promise<void> }[] = [];
  return {
    cluster,
    fake,
    workflowBundle,
    connection,
    client,
    async startWorker(taskQueue) {
      const worker = await createWorker({
        connection: nativeConnection,
        taskQueue,
        workflowBundle,
        activityOptions: { model: { baseURL: fake.baseURL, apiKey: 'test-key' } },
        overrides: { stickyQueueScheduleToStartTimeout: '1s' },
      });
      const running = worker.run();
      const stop = async () => {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running;
      };
      workers.push({ stop });
      return { worker, loopwright: new LoopwrightClient(client, taskQueue), stop };
    },
    async killAndRestart(name, downMs = 0) {
      await cluster.stopProcess(name, 'SIGKILL');
      if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
      await cluster.startProcess(name);
    },
    async stallReport(workflowId) {
      const lines: string[] = [];
      const describe = async (id: string, depth: number): Promise<void> => {
        const pad = '  '.repeat(depth);
        try {
          const { raw, status } = await client.workflow.getHandle(id).describe();
          lines.push(`${pad}${id}: ${status.name}, history length ${raw.workflowExecutionInfo?.historyLength}`);
          for (const a of raw.pendingActivities ?? []) {
            lines.push(
              `${pad}  activity ${a.activityType?.name} #${a.activityId}: state ${a.state}, attempt ${a.attempt}, last started ${a.lastStartedTime?.seconds}, last heartbeat ${a.lastHeartbeatTime?.seconds}`,
            );
          }
          if (raw.pendingWorkflowTask) lines.push(`${pad}  workflow task: state ${raw.pendingWorkflowTask.state}, attempt ${raw.pendingWorkflowTask.attempt}`);
          const children = raw.pendingChildren ?? [];
          lines.push(`${pad}  ${children.length} pending children`);
          for (const c of children.slice(0, 5)) if (c.workflowId) await describe(c.workflowId, depth + 1);
        } catch (err) {
          lines.push(`${pad}${id}: describe failed: ${(err as Error).message}`);
        }
      };
      await describe(workflowId, 0);
      return lines.join('\n');
    },
    async close() {
      await Promise.all(workers.map((w) => w.stop().catch(() => undefined)));
      await closeNativeConnection(nativeConnection);
      await connection.close();
      await fake.close();
      // LOOPWRIGHT_KEEP_CLUSTER=1 leaves the state folder (logs, configs, data) to read after a failure.
      if (process.env.LOOPWRIGHT_KEEP_CLUSTER === '1') await cluster.stop();
      else await cluster.destroy();
    },
  };
}
