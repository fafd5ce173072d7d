/**
 * Jest's Node environment, plus one clean-up when a test file is done. Jest runs the files in band:
 * one process, one global object per file. Temporal's activity and Nexus packages keep their
 * AsyncLocalStorage on that global; once an in-process worker ran an activity, Node lists the
 * storage among the live ones for good, and every promise and callback made after it, by any later
 * file, is propagated through every storage listed: late files ran two to three times slower than
 * alone. Disabling each storage as its file's environment is torn down (after every hook of the
 * file, so no activity of it still runs) takes it off Node's list.
 */
const { TestEnvironment } = require('jest-environment-node');

/** The global symbols under which Temporal's packages keep their AsyncLocalStorage. */
const STORAGE_SYMBOLS = ['__temporal_activity_context_storage__', '__temporal_nexus_context_storage__'].map((name) => Symbol.for(name));

class LoopwrightTestEnvironment extends TestEnvironment {
  async teardown() {
    for (const symbol of STORAGE_SYMBOLS) this.global[symbol]?.disable?.();
    await super.teardown();
  }
}

module.exports = LoopwrightTestEnvironment;
