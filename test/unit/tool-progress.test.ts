/** The tool progress a command's activity reports, as the command line's follow() and the web events both read it. */
import { isToolProgress, newOutput } from '../../common/tool-progress';

test('isToolProgress: a tool report with its output and byte count, and nothing else', () => {
  expect(isToolProgress({ kind: 'tool_progress', output: 'a\n', bytes: 2 })).toBe(true);
  expect(isToolProgress({ kind: 'tool_progress', target: 'npm test', output: '', bytes: 0 })).toBe(true);
  for (const other of [
    undefined,
    null,
    'tool_progress',
    { kind: 'loopwright.stream', text: 'x', attempt: 1, seq: 1 },
    { kind: 'tool_progress', output: 'a' },
    { kind: 'tool_progress', output: 1, bytes: 1 },
    { kind: 'tool_progress', output: 'a', bytes: 1, target: 7 },
  ]) {
    expect([other, isToolProgress(other)]).toEqual([other, false]);
  }
});

test('newOutput: the bytes a reader has not shown yet, a mark where it missed some, and no half character', () => {
  expect(newOutput('one\ntwo\n', 4)).toBe('two\n');
  expect(newOutput('one\ntwo\n', 8)).toBe('one\ntwo\n');
  expect(newOutput('one\ntwo\n', 0)).toBe('');
  // It grew by more than the tail holds: what came between is marked.
  expect(newOutput('two\n', 20)).toBe('…two\n');
  // "é" is two bytes: cut through, the half is dropped rather than shown as U+FFFD.
  expect(newOutput('café\n', 2)).toBe('\n');
  expect(newOutput('café\n', 3)).toBe('é\n');
});
