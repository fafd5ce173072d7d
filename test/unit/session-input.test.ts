import { sessionInputProblem } from '../../common/session-input-schema';

const VALID = { bundlePath: '/b', agentId: 'pm' };

test('session input: a minimal and a full input are valid', () => {
  expect(sessionInputProblem(VALID)).toBeUndefined();
  expect(
    sessionInputProblem({
      ...VALID,
      firstMessage: 'hi',
      oneShot: true,
      maxIterations: 5,
      model: 'm',
      outputRoots: ['/out'],
      projectRoot: '/p',
      idleTimeout: '1 hour',
      timeouts: { modelCall: '1 minute', tool: 5000 },
      approval: { policy: ['save_output'], timeout: '10 minutes', onTimeout: 'approve' },
      loopBreakers: false,
      iterationWarning: 0.5,
      maxRepeatedFailures: 2,
      continueAsNew: { maxHistoryBytes: 1000, maxHistoryEvents: 100 },
    }),
  ).toBeUndefined();
});

test.each([
  [{ bundlePath: '/b' }, 'agentId: expected a string, got undefined'],
  [{ agentId: 'pm' }, 'bundlePath: expected a string, got undefined'],
  [{ ...VALID, bundlePath: '  ' }, 'bundlePath: must not be empty'],
  [{ ...VALID, maxIterations: 'many' }, 'maxIterations: expected a whole number >= 1, got "many"'],
  [{ ...VALID, maxIterations: 0 }, 'maxIterations: expected a whole number >= 1, got 0'],
  [{ ...VALID, outputRoots: ['/a', ''] }, 'outputRoots.1: must not be empty'],
  [{ ...VALID, timeouts: { toll: '1s' } }, 'timeouts.toll: unknown setting (known: modelCall, modelHeartbeat, tool, toolHeartbeat, filesWait)'],
  [{ ...VALID, approval: { policy: 'some' } }, 'approval.policy: expected one of none, writes, all, got "some"'],
  [{ ...VALID, iterationWarning: 2 }, 'iterationWarning: expected a number from 0 to 1, got 2'],
  [{ ...VALID, continueAsNew: { maxHistoryBytes: -1 } }, 'continueAsNew.maxHistoryBytes: expected a whole number >= 1, got -1'],
  [null, 'the session input must be an object, got null'],
  [['a'], 'the session input must be an object, got a list'],
])('session input: %j is refused naming the field', (input, message) => {
  expect(sessionInputProblem(input)).toBe(message);
});

test('session input: a duration Temporal cannot read is refused at the start, naming the field', () => {
  expect(sessionInputProblem({ ...VALID, commands: { enabled: true, timeout: 'two minutes' } })).toBe('commands.timeout: expected a duration such as \'30 seconds\', got "two minutes"');
  expect(sessionInputProblem({ ...VALID, idleTimeout: 'soon' })).toBe('idleTimeout: expected a duration such as \'30 seconds\', got "soon"');
  expect(sessionInputProblem({ ...VALID, commands: { enabled: true, timeout: '90s' }, idleTimeout: '2 hours' })).toBeUndefined();
});
