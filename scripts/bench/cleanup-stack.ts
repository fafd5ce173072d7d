/**
 * Everything the benchmark starts registers how to stop it here; `run` undoes it in reverse order,
 * once, even when a step fails, so servers, workers and temp folders never outlive the run.
 */

/** A last-in, first-out list of clean-up steps. */
export class CleanupStack {
  private readonly steps: { label: string; fn: () => Promise<void> | void }[] = [];
  private running: Promise<string[]> | undefined;

  /** Register a step; it runs before every step registered earlier. */
  push(label: string, fn: () => Promise<void> | void): void {
    this.steps.push({ label, fn });
  }

  /** Run every step (each at most once); resolves with the messages of the steps that failed. */
  run(): Promise<string[]> {
    this.running ??= (async () => {
      const failures: string[] = [];
      for (let step = this.steps.pop(); step; step = this.steps.pop()) {
        try {
          await step.fn();
        } catch (err) {
          failures.push(`${step.label}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
      return failures;
    })();
    return this.running;
  }
}
