/**
 * The transcript side of a turn (workflows/turn/turn-messages.ts), pure functions over a
 * `HashedTranscript`: after an interrupt or a content filter every tool call of the latest reply
 * gets a result, in call order, so the transcript stays a valid conversation; the turn's reply is
 * the latest assistant text; tool calls are counted from the turn's first message; and a call that
 * fails the same way again is pointed out to the model at the second time and ends the turn `stuck`
 * at the limit, with the exact texts the model and the user read.
 */
import type { ToolMessage } from '../../../common/messages';
import { closeDanglingToolCalls, countToolCalls, FILTERED_RESULT, INTERRUPTED_RESULT, lastAssistantText, noteRepeatedFailures } from '../../../workflows/turn/turn-messages';
import { assistant, system, toolCall, toolResult, transcriptOf, user } from '../../support/workflow-fakes';

const read = (id: string, path = 'missing.md') => toolCall(id, 'read_file', { file_path: path });
const ENOENT = { success: false, error: 'ENOENT: no such file or directory' };

describe('closeDanglingToolCalls', () => {
  test('turn messages: every unanswered call of the latest reply gets the interrupted result, in call order', () => {
    const transcript = transcriptOf(system('sys'), user('go'), assistant(null, [read('c1'), read('c2'), read('c3')]), toolResult('c2', { success: true }));
    closeDanglingToolCalls(transcript, 1);
    expect(transcript.slice(4)).toEqual([
      { role: 'tool', tool_call_id: 'c1', content: JSON.stringify(INTERRUPTED_RESULT) },
      { role: 'tool', tool_call_id: 'c3', content: JSON.stringify(INTERRUPTED_RESULT) },
    ]);
    expect(JSON.parse((transcript.messages[4] as ToolMessage).content)).toEqual({ success: false, error: 'Interrupted by the user before this tool finished' });
    // Closed once: a second pass adds nothing.
    closeDanglingToolCalls(transcript, 1);
    expect(transcript.length).toBe(6);
  });

  test('turn messages: a content filter closes them with its own result', () => {
    const transcript = transcriptOf(user('go'), assistant('partial', [read('c1')]));
    closeDanglingToolCalls(transcript, 0, FILTERED_RESULT);
    expect(JSON.parse((transcript.messages[2] as ToolMessage).content)).toEqual({ success: false, error: "Not run: the model server's content filter stopped the reply" });
  });

  test("turn messages: only the latest reply from the turn's first message is looked at", () => {
    // An earlier turn's dangling call is not this turn's to close.
    const earlier = transcriptOf(user('one'), assistant(null, [read('old')]), user('two'));
    closeDanglingToolCalls(earlier, 2);
    expect(earlier.length).toBe(3);
    // The latest reply is text: nothing is open, whatever came before it.
    const answered = transcriptOf(user('go'), assistant(null, [read('c1')]), assistant('done'));
    closeDanglingToolCalls(answered, 0);
    expect(answered.length).toBe(3);
  });
});

describe('what a turn holds', () => {
  const transcript = transcriptOf(
    system('sys'),
    user('first'),
    assistant('first answer'),
    user('second'),
    assistant('Let me read.', [read('a'), read('b')]),
    toolResult('a', { success: true }),
    toolResult('b', { success: true }),
    assistant(null, [read('c')]),
    toolResult('c', { success: true }),
    assistant(''),
  );

  test('turn messages: the reply is the latest assistant text of the turn, null when it has none', () => {
    expect(lastAssistantText(transcript, 3)).toBe('Let me read.');
    expect(lastAssistantText(transcript, 0)).toBe('Let me read.');
    expect(lastAssistantText(transcript, 5)).toBeNull();
    expect(lastAssistantText(transcriptOf(user('x'), assistant('only')), 0)).toBe('only');
  });

  test("turn messages: tool calls are counted from the turn's first message", () => {
    expect(countToolCalls(transcript, 3)).toBe(3);
    expect(countToolCalls(transcript, 5)).toBe(1);
    expect(countToolCalls(transcript, 10)).toBe(0);
  });
});

describe('noteRepeatedFailures', () => {
  test('turn messages: the second identical failure is pointed out to the model; the limit ends the turn stuck', () => {
    const transcript = transcriptOf(user('read it'));
    const failures: Record<string, number> = {};
    expect(noteRepeatedFailures(transcript, [read('1')], [ENOENT], failures, 3)).toBeUndefined();
    expect(transcript.length).toBe(1);
    expect(noteRepeatedFailures(transcript, [read('2')], [ENOENT], failures, 3)).toBeUndefined();
    expect(transcript.slice(1)).toEqual([
      {
        role: 'system',
        content:
          '[Loopwright] This exact call has now failed 2 times with the same error: read_file {"file_path":"missing.md"} → ENOENT: no such file or directory. Do not repeat it; change the arguments, try something else, or ask the user.',
      },
    ]);
    expect(noteRepeatedFailures(transcript, [read('3')], [ENOENT], failures, 3)).toBe(
      'The same call kept failing (3 times): read_file {"file_path":"missing.md"} → ENOENT: no such file or directory. Tell me how to go on.',
    );
    // At the limit the user is told, not the model.
    expect(transcript.length).toBe(2);
  });

  test('turn messages: other arguments or another error count apart; successes, declined calls and missing results not at all', () => {
    const transcript = transcriptOf(user('go'));
    const failures: Record<string, number> = {};
    const declined = { success: false, declined: true, error: 'The user declined this call' };
    for (let i = 0; i < 3; i++) {
      noteRepeatedFailures(
        transcript,
        [read(`a${i}`, 'a.md'), read(`b${i}`, 'b.md'), read(`c${i}`), read(`d${i}`), read(`e${i}`)],
        [ENOENT, { success: true }, declined, undefined, i === 0 ? ENOENT : { success: false, error: 'EACCES' }],
        failures,
        4,
      );
    }
    expect(Object.values(failures).sort()).toEqual([1, 2, 3]);
    expect(transcript.slice(1).map((m) => m.content)).toEqual([
      expect.stringContaining('read_file {"file_path":"a.md"} → ENOENT: no such file or directory'),
      expect.stringContaining('failed 3 times'),
      expect.stringContaining('read_file {"file_path":"missing.md"} → EACCES'),
    ]);
  });

  test('turn messages: long arguments are cut in the texts, and the first stuck call is the one named', () => {
    const long = toolCall('l', 'save_output', { file_path: 'doc.md', content: 'y'.repeat(500) });
    const failures: Record<string, number> = {};
    const transcript = transcriptOf(user('go'));
    const stuck = noteRepeatedFailures(transcript, [long, read('r')], [{ success: false, error: 'disk full' }, ENOENT], failures, 1);
    const args = long.function.arguments;
    expect(stuck).toBe(`The same call kept failing (1 times): save_output ${args.slice(0, 200)}… (${args.length} chars) → disk full. Tell me how to go on.`);
  });
});
