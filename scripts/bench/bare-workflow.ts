/**
 * The bench's bare baseline workflow: a loop that calls one trivial activity `iterations` times in
 * sequence, nothing else. It runs in Temporal's workflow sandbox (bundled on its own by
 * bare-loop.ts), so it imports @temporalio/workflow only.
 */
import { proxyActivities } from '@temporalio/workflow';

/** The one activity of the bare loop. */
export interface BareActivities {
  /** Returns `i + 1`; records when it ran (in the worker's process). */
  tick(i: number): Promise<number>;
}

const { tick } = proxyActivities<BareActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 1 },
});

/** Call `tick` `iterations` times, one after the other; returns the sum of its answers. */
export async function bareLoop(iterations: number): Promise<number> {
  let sum = 0;
  for (let i = 0; i < iterations; i++) sum += await tick(i);
  return sum;
}
