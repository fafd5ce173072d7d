import { headlessMessage, HEADLESS_PREAMBLE, parseHeadlessStatus } from '../../common/headless';

describe('headless', () => {
  test('headlessMessage: the preamble, then the message as given', () => {
    expect(headlessMessage('create a PRD')).toBe(`${HEADLESS_PREAMBLE}\n\ncreate a PRD`);
  });

  test('parseHeadlessStatus: a fenced JSON status at the end', () => {
    const text = 'Done.\n```json\n{"status": "complete", "assumptions": ["x"], "open_questions": []}\n```\n';
    expect(parseHeadlessStatus(text)).toEqual({ status: 'complete', assumptions: ['x'], open_questions: [] });
  });

  test('parseHeadlessStatus: a bare object with nested objects and braces in strings; the last status wins', () => {
    const text = 'First {"status": "blocked"} then {"status": "partial", "files": {"prd": "a}.md"}, "open_questions": ["{why}"]}';
    expect(parseHeadlessStatus(text)).toEqual({ status: 'partial', files: { prd: 'a}.md' }, open_questions: ['{why}'] });
  });

  test('parseHeadlessStatus: nothing for an answer without a status, an unknown status, or a status that is not last JSON-able', () => {
    expect(parseHeadlessStatus(undefined)).toBeUndefined();
    expect(parseHeadlessStatus('All good.')).toBeUndefined();
    expect(parseHeadlessStatus('{"status": "done"}')).toBeUndefined();
    expect(parseHeadlessStatus('{"result": {"status": 3}}')).toBeUndefined();
    expect(parseHeadlessStatus('{"status": "complete"')).toBeUndefined();
  });

  test('parseHeadlessStatus: an answer of many braces is searched from its end, in bounded time', () => {
    const text = `${'{'.repeat(200_000)} {"status": "complete"}`;
    expect(parseHeadlessStatus(text)).toEqual({ status: 'complete' });
  });
});
