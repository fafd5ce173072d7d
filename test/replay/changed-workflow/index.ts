/**
 * A deliberately incompatible `agentSession` (it schedules the model call before initialising the
 * agent), used to show that the replay test does catch a change that breaks old histories.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { SessionActivities } from '../../../common/activity-types';

const { callModel } = proxyActivities<SessionActivities>({ startToCloseTimeout: '1 minute' });

export async function agentSession(): Promise<void> {
  await callModel({ messages: [], tools: [] });
}
