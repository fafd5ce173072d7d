/**
 * `loopwright demo [project] [agent]`: one real session of the example bundle (or of a project of
 * the user's: a BMAD install, a folder of skills) on the embedded Temporal server. It
 * talks to OpenAI (or OPENAI_BASE_URL) when configured, otherwise to a scripted model server that it
 * names plainly, and always runs its own worker so the model settings are the ones shown here.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ModelActivityOptions } from '../../activities/model/call-model';
import { demoResponder } from '../../fake-model/demo-model';
import { projectDemoResponder } from '../../fake-model/demo-project-model';
import { startFakeOpenAI, type FakeOpenAI } from '../../fake-model/server';
import { startInProcessWorker } from '../in-process-worker';
import type { CommandOutput } from '../output';
import { watchProgress } from '../progress';
import type { SessionHandle } from '../../client/session-client';
import type { SessionState } from '../../common/session-types';
import { openTemporal } from '../temporal-session';
import { defaultStateDir, projectRoot } from '../../client/server/project-paths';
import { webUiLink } from './command-support';

/** The example bundle shipped with the package (found from the package root, so compiled code finds it too). */
export const demoBundle = (): string => path.join(projectRoot(), 'bundles', 'requirements-facilitator');

/**
 * The demo's project folder (`{project-root}`): `demo/` in the state folder, so `.loopwright/demo`
 * in a checkout (git-ignored) and `~/.loopwright/state/demo` for an installed package.
 */
export const demoProject = (): string => path.join(defaultStateDir(), 'demo');

/** Options of `loopwright demo`. */
export interface DemoOptions {
  /** The message of the one turn (default `*intake`; `1`, the first menu item, for a project). */
  message?: string;
  /** Leave the session open instead of ending it. */
  keepOpen?: boolean;
}

/**
 * Runs the demo: the example bundle, or with `project` a project of the user's (a BMAD install, a
 * folder of skills) and its agent `agentId` (default: the first it lists).
 */
export async function demoCommand(options: DemoOptions, out: CommandOutput, project?: string, agentId?: string): Promise<number> {
  const target = project !== undefined ? await projectTarget(project, agentId, out) : undefined;
  if (target === null) return 1;
  const message = options.message ?? (target ? '1' : '*intake');
  const realModel = Boolean(process.env.OPENAI_API_KEY || process.env.OPENAI_BASE_URL);
  let fake: FakeOpenAI | undefined;
  let model: ModelActivityOptions | undefined;
  if (realModel) {
    out.error(`Model: ${process.env.OPENAI_BASE_URL ? `OpenAI-compatible server at ${process.env.OPENAI_BASE_URL}` : 'OpenAI'} (${process.env.LOOPWRIGHT_MODEL ?? 'default model'})`);
  } else {
    fake = await startFakeOpenAI({ responder: target ? projectDemoResponder : demoResponder });
    model = { baseURL: fake.baseURL, apiKey: 'scripted' };
    out.error(`Model: no OPENAI_API_KEY set, so this demo uses Loopwright's SCRIPTED model server at ${fake.baseURL}`);
    out.error('       (canned replies, not a real model; set OPENAI_API_KEY or OPENAI_BASE_URL to talk to one)');
  }
  // A queue of its own, so that no other worker with other model settings takes the demo's tasks.
  const temporal = await openTemporal(out, { taskQueue: `loopwright-demo-${process.pid}` });
  const worker = await startInProcessWorker(temporal, { model });
  try {
    // The example's project is a git-ignored folder of the repository: its documents land in docs/ there.
    // A project of the user's is its own project: its documents land in its output folder.
    if (!target) fs.mkdirSync(demoProject(), { recursive: true });
    const session = target
      ? await temporal.loopwright.start({ bundlePath: target.project, agentId: target.agentId, projectRoot: target.project })
      : await temporal.loopwright.start({ bundlePath: demoBundle(), agentId: 'facilitator', projectRoot: fs.realpathSync(demoProject()) });
    out.error(`Session ${session.workflowId} started`);
    const ready = await waitForAgent(session);
    if (ready?.status === 'failed') {
      out.error(`The session failed before its first turn: ${ready.error ?? 'unknown error'}`);
      return 1;
    }
    const agent = ready?.agent;
    if (agent) out.error(`Agent: ${agent.name}, ${agent.title} (${agent.commands.map((c) => c.cmd).join(' ')})`);
    out.error(`You: ${message}`);
    const progress = watchProgress(session, out);
    const result = await session.send(message).finally(() => progress.stop());
    out.log(`\n${result.response ?? ''}\n`);
    const saved = (await session.turnMessages(result))
      .filter((m) => m.role === 'tool')
      .map((m) => JSON.parse(m.content) as { success?: boolean; path?: string; size?: number })
      .filter((r) => r.success && r.path && typeof r.size === 'number' && !('content' in r));
    for (const file of saved) out.error(`Saved: ${file.path} (${file.size} bytes)`);
    out.error(`Turn: ${result.status} in ${result.iterations} model call(s), ${result.usage.totalTokens} tokens`);
    if (options.keepOpen) {
      out.error(`The session stays open: loopwright send ${session.workflowId} "<message>" (with a worker running: loopwright worker)`);
    } else {
      await session.end();
      const ended = await session.result();
      const history = await session.workflow.fetchHistory();
      out.error(`Session completed after ${ended.turns} turn(s); its history has ${history.events?.length ?? 0} events`);
    }
    if (temporal.uiUrl) out.error(`Read every step in the Web UI: ${webUiLink(temporal, session.workflowId)}`);
    return result.success ? 0 : 1;
  } finally {
    await worker.stop();
    await temporal.close();
    await fake?.close();
  }
}

/** The project and agent a `demo <project>` runs; null (said on stderr) when the project offers no agent. */
async function projectTarget(project: string, agentId: string | undefined, out: CommandOutput): Promise<{ project: string; agentId: string } | null> {
  const { listProject } = await import('../../bundle/inspect');
  const listing = await listProject(project);
  if (agentId !== undefined) return { project: listing.projectRoot, agentId };
  const first = listing.agents[0];
  if (first === undefined) {
    out.error(`${project} offers no agent (loopwright inspect ${project} lists what it has)`);
    return null;
  }
  if (listing.agents.length > 1) out.error(`Agent: ${first.id}, the first of ${listing.agents.length} (name another: loopwright demo ${project} <agent>)`);
  return { project: listing.projectRoot, agentId: first.id };
}

/** The state once initialisation has run (a few hundred milliseconds) or failed, or undefined after 10 s. */
async function waitForAgent(session: SessionHandle): Promise<SessionState | undefined> {
  for (let i = 0; i < 50; i++) {
    const state = await session.state().catch(() => undefined);
    if (state?.agent || state?.status === 'failed') return state;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return undefined;
}
