/**
 * Runs in every test file (Jest `setupFilesAfterEnv`), undoing what a file would otherwise leave
 * behind in the one process that runs them all in band:
 *
 * - A replay worker (`Worker.runReplayHistory`, `runReplayHistories`) runs its workflows in the
 *   test's own thread, and the SDK then installs its stack-trace promise hook and
 *   `Error.prepareStackTrace` in that thread and never takes them off: every promise of every later
 *   file went through one hook per file that had replayed. The hook is taken off when the file is
 *   done, if this file loaded the SDK's workflow runner at all (`require.cache` is this file's module
 *   registry: nothing is loaded here).
 * - A file with side-by-side tests (`test.concurrent`) gets an AsyncLocalStorage from jest-circus
 *   (the running test's name, for `expect`), which it never disables: once used, Node keeps it in
 *   the list every later promise and callback is propagated through. The storages jest-circus makes
 *   while the file runs are disabled when it is done.
 */
import asyncHooks from 'node:async_hooks';

const VM_SHARED = require.resolve('@temporalio/worker/lib/workflow/vm-shared');

const { AsyncLocalStorage } = asyncHooks;
const circusStorages: InstanceType<typeof AsyncLocalStorage>[] = [];
/** AsyncLocalStorage, noting the instances jest-circus makes (it reads the class from the module when it starts the tests). */
class NotedStorage<T> extends AsyncLocalStorage<T> {
  constructor() {
    super();
    if (/[\\/]jest-circus[\\/]/.test(new Error().stack ?? '')) circusStorages.push(this);
  }
}
(asyncHooks as { AsyncLocalStorage: typeof AsyncLocalStorage }).AsyncLocalStorage = NotedStorage;

afterAll(() => {
  (asyncHooks as { AsyncLocalStorage: typeof AsyncLocalStorage }).AsyncLocalStorage = AsyncLocalStorage;
  for (const storage of circusStorages.splice(0)) storage.disable();
  if (!(VM_SHARED in require.cache)) return;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded already, looked up only to undo its global hooks
  const { globalHandlers } = require(VM_SHARED) as { globalHandlers: { installed: boolean; uninstall(): void } };
  if (globalHandlers.installed) globalHandlers.uninstall();
});
