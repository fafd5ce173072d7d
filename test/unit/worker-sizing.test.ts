import { resolveWorkerSizing, sizingOptions, WorkerSizingError } from '../../worker/worker-sizing';
import { stickyTimeout } from '../../worker/create-worker';

test('worker sizing: defaults give every active session a model call and its parallel tools', () => {
  const sizing = resolveWorkerSizing({}, {});
  expect(sizing).toEqual({ activeSessions: 200, parallelTools: 4, activitySlots: 1000, workflowTaskSlots: 40, cachedSessions: 1000 });
  expect(sizingOptions(sizing)).toEqual({ maxConcurrentActivityTaskExecutions: 1000, maxConcurrentWorkflowTaskExecutions: 40, maxCachedWorkflows: 1000 });
});

test('worker sizing: the environment overrides defaults, options override the environment', () => {
  const env = { LOOPWRIGHT_ACTIVE_SESSIONS: '10', LOOPWRIGHT_PARALLEL_TOOLS: '2', LOOPWRIGHT_MAX_CACHED_SESSIONS: '50' };
  expect(resolveWorkerSizing({}, env)).toMatchObject({ activeSessions: 10, activitySlots: 30, cachedSessions: 50 });
  expect(resolveWorkerSizing({ activitySlots: 99 }, env)).toMatchObject({ activitySlots: 99 });
});

test('worker sizing: a cache of 0 or a bad number is refused, naming the setting', () => {
  expect(() => resolveWorkerSizing({}, { LOOPWRIGHT_MAX_CACHED_SESSIONS: '0' })).toThrow(WorkerSizingError);
  expect(() => resolveWorkerSizing({}, { LOOPWRIGHT_MAX_CACHED_SESSIONS: '0' })).toThrow(/LOOPWRIGHT_MAX_CACHED_SESSIONS \(cachedSessions\) must be a whole number >= 2, got 0/);
  expect(() => resolveWorkerSizing({ activitySlots: 2 }, {})).toThrow(/activitySlots must be a whole number >= 5/);
  expect(() => resolveWorkerSizing({}, { LOOPWRIGHT_ACTIVITY_SLOTS: 'many' })).toThrow(/LOOPWRIGHT_ACTIVITY_SLOTS/);
});

test('worker sizing: a traced worker caches fewer sessions by default (each costs more), unless told otherwise', () => {
  expect(resolveWorkerSizing({}, {}, { traced: true }).cachedSessions).toBe(250);
  expect(resolveWorkerSizing({}, { LOOPWRIGHT_MAX_CACHED_SESSIONS: '800' }, { traced: true }).cachedSessions).toBe(800);
  expect(resolveWorkerSizing({ cachedSessions: 600 }, {}, { traced: true }).cachedSessions).toBe(600);
  expect(resolveWorkerSizing({}, {}, { traced: false }).cachedSessions).toBe(1000);
});

describe('LOOPWRIGHT_STICKY_TIMEOUT', () => {
  test('unset leaves the SDK default; a duration or milliseconds set the sticky queue timeout', () => {
    expect(stickyTimeout({})).toEqual({});
    expect(stickyTimeout({ LOOPWRIGHT_STICKY_TIMEOUT: ' ' })).toEqual({});
    expect(stickyTimeout({ LOOPWRIGHT_STICKY_TIMEOUT: '2s' })).toEqual({ stickyQueueScheduleToStartTimeout: 2000 });
    expect(stickyTimeout({ LOOPWRIGHT_STICKY_TIMEOUT: '1500' })).toEqual({ stickyQueueScheduleToStartTimeout: 1500 });
  });

  test('a value that is not a positive duration names the variable', () => {
    for (const bad of ['soon', '0', '-3s']) {
      expect(() => stickyTimeout({ LOOPWRIGHT_STICKY_TIMEOUT: bad })).toThrow(new WorkerSizingError(`LOOPWRIGHT_STICKY_TIMEOUT must be milliseconds or a duration such as 2s, got "${bad}"`));
    }
  });
});
