/**
 * Small statistics over timing samples: median and 95th percentile by nearest rank, enough for a
 * benchmark that prints a few figures.
 */

/** Summary of a set of samples, in the samples' unit. */
export interface SampleSummary {
  runs: number;
  median: number;
  p95: number;
  min: number;
  max: number;
}

/** The `q`-quantile (0..1) of `samples` by nearest rank; throws on an empty set. */
export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) throw new Error('quantile of no samples');
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1]!;
}

/** Median of `samples` (the mean of the two middle ones when the count is even). */
export function median(samples: readonly number[]): number {
  if (samples.length === 0) throw new Error('median of no samples');
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Runs, median, p95, min and max of `samples`. */
export function summarize(samples: readonly number[]): SampleSummary {
  return {
    runs: samples.length,
    median: median(samples),
    p95: quantile(samples, 0.95),
    min: Math.min(...samples),
    max: Math.max(...samples),
  };
}

/**
 * Time `fn` `runs` times after `warmup` untimed calls, one sample per call in milliseconds.
 * `check` sees every result, so a benchmark never times a call that quietly failed.
 */
export async function timeRuns<T>(fn: () => Promise<T>, options: { runs: number; warmup: number; check?: (result: T) => void }): Promise<SampleSummary> {
  for (let i = 0; i < options.warmup; i++) options.check?.(await fn());
  const samples: number[] = [];
  for (let i = 0; i < options.runs; i++) {
    const started = performance.now();
    const result = await fn();
    samples.push(performance.now() - started);
    options.check?.(result);
  }
  return summarize(samples);
}
