import { cutNote, extractJson, NO_ANSWER_NOTE, parseVerifierReply } from '../../../activities/verify/reply';
import { MAX_ITEM_NOTE_CHARS } from '../../../common/verify-types';

const answer = (items: unknown[]): string => JSON.stringify({ items });

describe('parseVerifierReply', () => {
  it('every item answered once: the verdicts in item order, notes trimmed, no warnings', () => {
    const reply = parseVerifierReply(
      answer([
        { n: 2, passed: false, note: '  The risks section is missing. ' },
        { n: 1, passed: true, note: 'Goals are stated in section 1.' },
      ]),
      2,
    );
    expect(reply).toEqual({
      ok: true,
      verdicts: [
        { passed: true, note: 'Goals are stated in section 1.' },
        { passed: false, note: 'The risks section is missing.' },
      ],
      warnings: [],
    });
  });

  it('a missing item fails with the no-answer note; unknown numbers are ignored; each is a warning', () => {
    const reply = parseVerifierReply(
      answer([
        { n: 1, passed: true, note: 'ok' },
        { n: 7, passed: true, note: 'x' },
        { n: 0, passed: false, note: 'y' },
      ]),
      3,
    );
    if (!reply.ok) throw new Error(reply.reason);
    expect(reply.verdicts).toEqual([
      { passed: true, note: 'ok' },
      { passed: false, note: NO_ANSWER_NOTE },
      { passed: false, note: NO_ANSWER_NOTE },
    ]);
    expect(reply.warnings).toEqual(['The verifier gave no answer for 2 items (2, 3); they count as failed', 'The verifier answered for 2 item numbers the checklist does not have (7, 0); ignored']);
  });

  it('an item answered twice: a failed answer stands, with a warning; an empty or null note is none', () => {
    const reply = parseVerifierReply(
      answer([
        { n: 1, passed: true, note: '' },
        { n: 1, passed: false, note: 'no date' },
        { n: 2, passed: true, note: null },
      ]),
      2,
    );
    if (!reply.ok) throw new Error(reply.reason);
    expect(reply.verdicts).toEqual([{ passed: false, note: 'no date' }, { passed: true }]);
    expect(reply.warnings).toEqual(['The verifier answered 1 item more than once (1); a failed answer stands']);
  });

  it('notes are cut to MAX_ITEM_NOTE_CHARS', () => {
    const reply = parseVerifierReply(answer([{ n: 1, passed: false, note: 'n'.repeat(2000) }]), 1);
    if (!reply.ok) throw new Error(reply.reason);
    expect(reply.verdicts[0]!.note).toHaveLength(MAX_ITEM_NOTE_CHARS);
    expect(cutNote('  ')).toBeUndefined();
  });

  it('the wrong shape is not a reply: passed as a string, n not an integer, no items array, an array at the top', () => {
    for (const content of [
      answer([{ n: 1, passed: 'yes', note: '' }]),
      answer([{ n: 1.5, passed: true, note: '' }]),
      answer([{ n: '1', passed: true, note: '' }]),
      JSON.stringify({ results: [] }),
      JSON.stringify([{ n: 1, passed: true }]),
    ]) {
      const reply = parseVerifierReply(content, 1);
      expect(reply.ok).toBe(false);
    }
    const reply = parseVerifierReply(answer([{ n: 1, passed: 'yes' }]), 1);
    expect(reply).toEqual({ ok: false, reason: expect.stringContaining('items.0.passed') as string });
  });

  it('garbage is not a reply', () => {
    expect(parseVerifierReply('All items pass, well done!', 2)).toEqual({ ok: false, reason: 'the reply holds no JSON object' });
    expect(parseVerifierReply('', 2).ok).toBe(false);
  });
});

describe('extractJson', () => {
  const value = { items: [{ n: 1, passed: true, note: 'ok' }] };
  const json = JSON.stringify(value);

  it('the whole reply, one fenced ```json or bare ``` block, or one object inside prose', () => {
    expect(extractJson(`  ${json}\n`)).toEqual(value);
    expect(extractJson(`Here is my review:\n\`\`\`json\n${json}\n\`\`\`\nDone.`)).toEqual(value);
    expect(extractJson(`\`\`\`\n${JSON.stringify(value, null, 2)}\n\`\`\``)).toEqual(value);
    expect(extractJson(`My verdicts: ${json} -- that is all.`)).toEqual(value);
  });

  it('nothing looser: two fenced blocks, a fence of another language, two objects in prose, broken JSON, a bare array', () => {
    expect(extractJson(`\`\`\`json\n${json}\n\`\`\`\n\`\`\`json\n${json}\n\`\`\``)).toBeUndefined();
    expect(extractJson(`\`\`\`yaml\n${json}\n\`\`\``)).toBeUndefined();
    expect(extractJson(`first ${json} and second ${json}`)).toBeUndefined();
    expect(extractJson('{"items": [ {"n": 1, "passed": tru')).toBeUndefined();
    expect(extractJson('[1, 2]')).toBeUndefined();
  });
});
