/**
 * Runs in every test file (Jest `setupFilesAfterEnv`). A replay worker (`Worker.runReplayHistory`,
 * `runReplayHistories`) runs its workflows in the test's own thread, and the SDK then installs its
 * stack-trace promise hook and `Error.prepareStackTrace` in that thread and never takes them off:
 * with the files run in band, every promise of every later file went through one hook per file
 * that had replayed. The hook is taken off when the file is done, if this file loaded the SDK's
 * workflow runner at all (`require.cache` is this file's module registry: nothing is loaded here).
 */
const VM_SHARED = require.resolve('@temporalio/worker/lib/workflow/vm-shared');

afterAll(() => {
  if (!(VM_SHARED in require.cache)) return;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded already, looked up only to undo its global hooks
  const { globalHandlers } = require(VM_SHARED) as { globalHandlers: { installed: boolean; uninstall(): void } };
  if (globalHandlers.installed) globalHandlers.uninstall();
});
