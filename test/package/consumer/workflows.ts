// A consumer's workflow entry point: Loopwright's session workflow next to one of its own.
import { proxyActivities } from '@temporalio/workflow';

export * from 'loopwright/workflows';

const { shout } = proxyActivities<{ shout(text: string): Promise<string> }>({ startToCloseTimeout: '10 seconds' });

export async function greet(name: string): Promise<string> {
  return `hello ${await shout(name)}`;
}
