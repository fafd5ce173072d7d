/**
 * Context part: one 100-turn session, each turn reading a 10 KB file, run twice against the fake
 * model server: over an 8,192-token window with compaction, and with a window so large that it
 * never compacts. Reports the prompt tokens sent per turn, the largest prompt against the window,
 * and the compactions with what their summaries cost in time and tokens.
 */
import { bundleWorkflowCode } from '@temporalio/worker';
import { LoopwrightClient } from '../../client/session-client';
import type { ChatMessage } from '../../common/messages';
import type { CompactionRecord } from '../../common/session-types';
import { isSummaryRequest, type RecordedRequest, type Step, startFakeOpenAI, text, toolCalls } from '../../fake-model/server';
import { bundlerLogger, createWorker, WORKFLOWS_PATH } from '../../worker/create-worker';
import type { BenchServer } from './bench-server';
import type { CleanupStack } from './cleanup-stack';
import { withTimeout } from './durable-loop';

/** Figures of one 100-turn session. */
export interface ContextRunFigures {
  label: string;
  window: number;
  turns: number;
  completed: number;
  /** Prompt tokens the turn's model calls sent (summaries excluded): first, median, last and mean turn. */
  promptPerTurn: { first: number; median: number; last: number; mean: number };
  /** Prompt tokens of all calls of the session, summaries included. */
  promptTotal: number;
  /** The largest single prompt, in tokens, and as a share of the window. */
  largestPrompt: number;
  largestShare: number;
  compactions: number;
  summaries: number;
  /** Time and tokens the summarising calls took. */
  compactionMs: number;
  compactionTokens: number;
  sessionSeconds: number;
}

export const CONTEXT_TURNS = 100;
export const CONTEXT_WINDOW = 8192;
const TURN_TIMEOUT_MS = 60_000;

/** A model that reads the file the user names once, then answers; compaction calls get a short summary. */
function responder(request: RecordedRequest): Step {
  if (isSummaryRequest(request)) return text('Summary: the user asked for a file to be read in each turn; each time it was read and acknowledged.');
  const messages = (request.body?.messages ?? []) as ChatMessage[];
  const last = messages[messages.length - 1];
  const user = [...messages].reverse().find((m) => m.role === 'user');
  const match = /read (\S+)/.exec(String(user?.content ?? ''));
  if (match && last?.role === 'user') return toolCalls([{ name: 'read_file', arguments: { file_path: match[1] } }]);
  return text('Read it; the requirements are noted.');
}

/** Run the two sessions; `file` is a tool path of a 10 KB file of the bundle. */
export async function measureContextWindow(
  server: BenchServer,
  bundlePath: string,
  agentId: string,
  file: string,
  cleanup: CleanupStack,
  progress: (line: string) => void,
): Promise<ContextRunFigures[]> {
  const fake = await startFakeOpenAI({ responder });
  cleanup.push('context fake model server', () => fake.close());
  const taskQueue = `loopwright-bench-context-${process.pid}`;
  const [workflowBundle, connection] = await Promise.all([bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: bundlerLogger }), server.nativeConnection()]);
  const worker = await createWorker({ connection, taskQueue, workflowBundle, activityOptions: { model: { baseURL: fake.baseURL, apiKey: 'bench-key' } } });
  const running = worker.run();
  cleanup.push('context worker', async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running;
  });
  const loopwright = new LoopwrightClient(server.client, taskQueue);
  const figures: ContextRunFigures[] = [];
  for (const run of [
    { label: 'with compaction', window: CONTEXT_WINDOW, serverWindow: CONTEXT_WINDOW },
    { label: 'without (window never reached)', window: 10_000_000, serverWindow: undefined },
  ]) {
    progress(`context: ${CONTEXT_TURNS} turns reading ${file}, ${run.label}`);
    fake.reset();
    fake.setResponder(responder);
    fake.setLimits({ contextWindow: run.serverWindow });
    const started = performance.now();
    const session = await loopwright.start({ bundlePath, agentId, context: { window: run.window }, searchAttributes: false });
    const perTurn: number[] = [];
    const compactions: CompactionRecord[] = [];
    let completed = 0;
    for (let turn = 1; turn <= CONTEXT_TURNS; turn++) {
      const result = await withTimeout(session.send(`turn ${turn}: read ${file}`), TURN_TIMEOUT_MS, `context turn ${turn}`);
      if (result.status === 'completed') completed += 1;
      compactions.push(...(result.compactions ?? []));
      perTurn.push(result.usage.promptTokens - (result.compactions ?? []).reduce((n, c) => n + c.summaryCallTokens, 0));
    }
    const state = await session.state();
    await session.end();
    const sessionSeconds = (performance.now() - started) / 1000;
    const prompts = fake.requests.map((r) => r.promptTokens);
    const largest = Math.max(...prompts);
    const sorted = [...perTurn].sort((a, b) => a - b);
    figures.push({
      label: run.label,
      window: run.window,
      turns: CONTEXT_TURNS,
      completed,
      promptPerTurn: { first: perTurn[0]!, median: sorted[Math.floor(sorted.length / 2)]!, last: perTurn[perTurn.length - 1]!, mean: Math.round(perTurn.reduce((a, b) => a + b, 0) / perTurn.length) },
      promptTotal: prompts.reduce((a, b) => a + b, 0),
      largestPrompt: largest,
      largestShare: largest / Math.min(run.window, CONTEXT_WINDOW),
      compactions: state.context?.compactions ?? 0,
      summaries: fake.requests.filter(isSummaryRequest).length,
      compactionMs: compactions.reduce((n, c) => n + c.durationMs, 0),
      compactionTokens: compactions.reduce((n, c) => n + c.summaryCallTokens, 0),
      sessionSeconds,
    });
  }
  return figures;
}
