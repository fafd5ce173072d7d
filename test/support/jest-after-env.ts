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
/**
 * Whether the caller's caller is jest-circus, read from the raw call sites: a formatted stack would
 * go through Jest's source maps, seconds per run for the storages libraries make as they load.
 */
function calledFromJestCircus(): boolean {
  const { prepareStackTrace, stackTraceLimit } = Error;
  Error.prepareStackTrace = (_error, sites) => sites;
  Error.stackTraceLimit = 3;
  try {
    const holder: { stack?: NodeJS.CallSite[] } = {};
    Error.captureStackTrace(holder, calledFromJestCircus);
    return (holder.stack ?? []).some((site) => /[\\/]jest-circus[\\/]/.test(site.getFileName() ?? ''));
  } finally {
    Error.prepareStackTrace = prepareStackTrace;
    Error.stackTraceLimit = stackTraceLimit;
  }
}

/** AsyncLocalStorage, noting the instances jest-circus makes (it reads the class from the module when it starts the tests). */
class NotedStorage<T> extends AsyncLocalStorage<T> {
  constructor() {
    super();
    if (calledFromJestCircus()) circusStorages.push(this);
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
