/**
 * The transcript's own SHA-256 (common/sha256.ts) against node:crypto: empty and one-block inputs,
 * every length around the padding boundaries, multi-byte UTF-8 (including surrogate pairs and a lone
 * surrogate, which both encode as U+FFFD), and random texts up to a few blocks, plus one of 240 KB.
 */
import crypto from 'node:crypto';
import { sha256Hex } from '../../../common/sha256';
import { mulberry32 } from '../../support/prng';

const expected = (text: string): string => crypto.createHash('sha256').update(text, 'utf8').digest('hex');

test('known vectors: empty text and "abc"', () => {
  expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});

test('every length from 0 to 200 bytes matches node:crypto (the padding boundaries at 55, 56, 63, 64, 119, 120)', () => {
  for (let n = 0; n <= 200; n++) {
    const text = 'x'.repeat(n);
    expect([n, sha256Hex(text)]).toEqual([n, expected(text)]);
  }
});

test('multi-byte UTF-8 matches node:crypto', () => {
  for (const text of ['é', 'naïve café', '日本語のテキスト', '😀 emoji 👩‍💻', 'lone \ud800 surrogate', '\u0000nul', 'é'.repeat(70)]) {
    expect([text, sha256Hex(text)]).toEqual([text, expected(text)]);
  }
});

test('random texts, and one of 240 KB, match node:crypto', () => {
  const random = mulberry32(20261127);
  const alphabet = 'ab c\n{}"\\é日😀';
  for (let round = 0; round < 300; round++) {
    const chars = Array.from({ length: Math.floor(random() * 300) }, () => [...alphabet][Math.floor(random() * [...alphabet].length)]);
    const text = chars.join('');
    expect(sha256Hex(text)).toBe(expected(text));
  }
  const big = 'a line of a big file, read twenty times\n'.repeat(6200);
  expect(sha256Hex(big)).toBe(expected(big));
});
