/** Bounded parallelism: run a task per item with at most `limit` running at once. */

/**
 * Call `task(item, index)` for every item, at most `limit` at a time, in order of the items.
 * Resolves with the results in item order; the first failure rejects (tasks already running finish
 * on their own, no new ones start).
 */
export async function mapWithLimit<T, R>(items: readonly T[], limit: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const lane = async () => {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        results[index] = await task(items[index]!, index);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
  return results;
}

/** The numbers 0..count-1. */
export function range(count: number): number[] {
  return Array.from({ length: count }, (_, i) => i);
}

/** Resolve after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** CPU time (user + system) this process has used so far, in milliseconds. */
export function ownCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}
