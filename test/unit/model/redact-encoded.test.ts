/**
 * The API key is redacted in every form a model server may echo it in: plain, base64 and base64url
 * at each byte offset inside a longer encoded text, hex, percent-encoded, JSON- and HTML-escaped,
 * nested escapes, base64 wrapped across lines; credential headers quoted from a request; in linear
 * time and without mangling ordinary text.
 */
import { redactKnownSecrets, redactSecrets } from '../../../activities/redaction/redact';
import { stableBase64 } from '../../../activities/redaction/secret-forms';

const KEY = 'sk-proj-Zq8vN3mT7xK2pL9wR4yB6cD1';

/** Every base64 text that holds KEY, at each of the three byte offsets, in both alphabets. */
function base64Carriers(key: string): [string, string][] {
  const carriers: [string, string][] = [];
  for (const prefix of ['', 'A', 'Bearer ', 'Authorization: Bearer ', 'xy']) {
    for (const suffix of ['', 'Z', '\r\nHost: api.example.com\r\n']) {
      const b64 = Buffer.from(`${prefix}${key}${suffix}`).toString('base64');
      carriers.push([`base64, ${prefix.length % 3} byte(s) before (${JSON.stringify(prefix)}), ${JSON.stringify(suffix)} after`, b64]);
      carriers.push([`base64url, ${prefix.length % 3} byte(s) before (${JSON.stringify(prefix)}), ${JSON.stringify(suffix)} after`, b64.replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '')]);
    }
  }
  return carriers;
}

/** Whether `text` still holds the key in any encoding the tests know of (an oracle independent of the code under test). */
function leaks(text: string, key = KEY): string[] {
  const found: string[] = [];
  const lower = text.toLowerCase();
  if (text.includes(key)) found.push('plain');
  if (lower.includes(Buffer.from(key).toString('hex'))) found.push('hex');
  for (const offset of [0, 1, 2]) {
    // The 8 characters from the middle of the key's base64 at this offset: any carrier holds them.
    const b64 = Buffer.from(`${'x'.repeat(offset)}${key}`).toString('base64');
    const middle = b64.slice(8, 24);
    if (text.includes(middle)) found.push(`base64@${offset}`);
    if (text.includes(middle.replaceAll('+', '-').replaceAll('/', '_'))) found.push(`base64url@${offset}`);
  }
  return found;
}

describe('redactSecrets: encoded keys', () => {
  it.each(base64Carriers(KEY))('redactSecrets: %s', (_what, carrier) => {
    const text = `Invalid credentials in header: ${carrier} (see docs)`;
    const out = redactSecrets(text, [KEY]);
    expect(leaks(out)).toEqual([]);
    expect(out).toContain('[redacted]');
    expect(out.startsWith('Invalid credentials in header: ')).toBe(true);
    expect(out.endsWith(' (see docs)')).toBe(true);
  });

  it('stableBase64: the characters kept depend on the key alone, at each offset', () => {
    const bytes = Buffer.from(KEY);
    for (const offset of [0, 1, 2]) {
      const middle = stableBase64(bytes, offset);
      expect(middle.length).toBeGreaterThanOrEqual(Math.floor((bytes.length * 8) / 6) - 2);
      for (const before of ['\x00\x00', '\xff\xff', 'ab']) {
        for (const after of ['', '\x00', '\xff\xff\xff']) {
          const encoded = Buffer.concat([Buffer.from(before.slice(0, offset), 'latin1'), bytes, Buffer.from(after, 'latin1')]).toString('base64');
          expect(encoded).toContain(middle);
        }
      }
    }
  });

  it.each([
    ['hex, lower case', Buffer.from(KEY).toString('hex')],
    ['hex, upper case', Buffer.from(KEY).toString('hex').toUpperCase()],
    ['percent-encoded, every byte, upper hex', [...Buffer.from(KEY)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('')],
    ['percent-encoded, every byte, lower hex', [...Buffer.from(KEY)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')],
    ['percent-encoded, some bytes', KEY.replace(/-/g, '%2D').replace(/q/g, '%71')],
    ['JSON \\u escapes', [...KEY].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')],
    ['JSON \\u escapes, upper hex, some characters', KEY.replace(/[A-Z]/g, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`)],
    ['JavaScript \\x escapes', [...KEY].map((c) => `\\x${c.charCodeAt(0).toString(16)}`).join('')],
    ['HTML character references', [...KEY].map((c, i) => (i % 2 ? `&#${c.charCodeAt(0)};` : `&#x${c.charCodeAt(0).toString(16)};`)).join('')],
    ['percent-encoded twice', encodeURIComponent([...KEY].map((c) => `%${c.charCodeAt(0).toString(16)}`).join(''))],
    ['percent-encoding inside JSON escapes', [...KEY].map((c) => `\\u0025${c.charCodeAt(0).toString(16)}`).join('')],
    ['base64 with escaped slashes (JSON)', Buffer.from(`Bearer ${KEY}`).toString('base64').replaceAll('/', '\\/')],
    ['base64 in a URL (percent-encoded +, / and =)', encodeURIComponent(Buffer.from(`xx${KEY}`).toString('base64'))],
    [
      'base64 wrapped across lines',
      (
        Buffer.from(`Authorization: Bearer ${KEY}`)
          .toString('base64')
          .match(/.{1,12}/g) ?? []
      ).join('\r\n'),
    ],
  ])('redactSecrets: %s', (_what, encoded) => {
    const out = redactSecrets(`echo: ${encoded} :end`, [KEY]);
    expect(out).toMatch(/^echo: .*\[redacted\].* :end$/s);
    // Nothing of the key is left in a form that can be read back.
    expect(leaks(out)).toEqual([]);
    expect(leaks(decodeAll(out))).toEqual([]);
  });

  it('redactSecrets: a key with spaces, form-encoded with + for space', () => {
    const secret = 'correct horse battery staple';
    const out = redactSecrets(`password=${new URLSearchParams({ p: secret }).toString().slice(2)}&x=1`, [secret]);
    expect(out).toBe('password=[redacted]&x=1');
  });

  it('redactSecrets: a non-ASCII key, plain, percent-encoded and base64', () => {
    const secret = 'clé-secrète-ÜNICODE-✓';
    const text = [
      secret,
      encodeURIComponent(secret),
      Buffer.from(`x${secret}`).toString('base64'),
      JSON.stringify(secret).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
    ].join(' | ');
    const out = redactKnownSecrets(text, [secret]);
    expect(out.split(' | ').every((part) => part.includes('[redacted]'))).toBe(true);
    expect(out).not.toContain(secret);
    expect(out).not.toContain(encodeURIComponent(secret).slice(3, -3));
  });

  it('redactSecrets: only the span that spelled the key goes, in the original text', () => {
    expect(redactSecrets(`a ${encodeURIComponent(KEY).replace(/-/g, '%2d')} b`, [KEY])).toBe('a [redacted] b');
    const escaped = [...KEY].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
    expect(redactSecrets(`{"m":"${escaped}","n":"ok"}`, [KEY])).toBe('{"m":"[redacted]","n":"ok"}');
  });

  it('redactKnownSecrets: ordinary text, short secrets and look-alikes are left alone', () => {
    const prose = 'The model said: 100% done, see \\n and &amp; and &#169; and café; c2stcHJvag== is not it.';
    expect(redactKnownSecrets(prose, [KEY])).toBe(prose);
    // Secrets too short to be looked for encoded are still replaced when plain (4 characters or more).
    expect(redactKnownSecrets('pw abcd and YWJjZA==', ['abcd'])).toBe('pw [redacted] and YWJjZA==');
    expect(redactKnownSecrets('pw abc', ['abc'])).toBe('pw abc');
    expect(redactKnownSecrets('nothing here', [])).toBe('nothing here');
  });
});

describe('redactSecrets: credential headers quoted back', () => {
  it.each([
    ['authorization: Bearer sk-other-key-123456', 'authorization: Bearer [redacted]'],
    ['Authorization: Basic dXNlcjpwYXNzd29yZA==', 'Authorization: Basic [redacted]'],
    ['Proxy-Authorization: Basic dXNlcjpwYXNz', 'Proxy-Authorization: Basic [redacted]'],
    ['api-key: 0123456789abcdef0123', 'api-key: [redacted]'],
    ['x-api-key: AKIAEXAMPLEKEY12345', 'x-api-key: [redacted]'],
    ['{"x-api-key": "AKIAEXAMPLEKEY12345", "n": 1}', '{"x-api-key": "[redacted]", "n": 1}'],
    ['{\\"authorization\\":\\"Bearer tok_123456789\\"}', '{\\"authorization\\":\\"Bearer [redacted]\\"}'],
    ['GET /v1?api_key=abc123def456&model=x', 'GET /v1?api_key=[redacted]&model=x'],
    ['Cookie: session=abc123; csrftoken=def456\nHost: x', 'Cookie: [redacted]\nHost: x'],
    ['set-cookie: "id=a3fWa; Max-Age=2592000"', 'set-cookie: "[redacted]"'],
  ])('redactSecrets: %s', (text, expected) => {
    expect(redactSecrets(text)).toBe(expected);
  });

  it('redactSecrets: stays linear on long hostile text', () => {
    const hostile = [
      `authorization:${' '.repeat(100_000)}\n`,
      `cookie:${' '.repeat(100_000)}"`,
      'authorization: '.repeat(20_000),
      '%'.repeat(100_000),
      '\\u00'.repeat(50_000),
      'é\\n'.repeat(100_000),
      '&#'.repeat(50_000),
      `${'%25'.repeat(50_000)}41`,
      'QUJD'.repeat(100_000),
    ];
    for (const text of hostile) {
      const started = performance.now();
      redactSecrets(text, [KEY]);
      expect({ text: text.slice(0, 20), slow: performance.now() - started > 1000 }).toEqual({ text: text.slice(0, 20), slow: false });
    }
  });
});

/** Every escape in `text` decoded, a few times over, to read back whatever the redaction left. */
function decodeAll(text: string): string {
  let out = text;
  for (let i = 0; i < 3; i += 1) {
    out = out
      .replace(/\\u([0-9a-fA-F]{4})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)))
      .replace(/\\x([0-9a-fA-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)))
      .replace(/\\\//g, '/')
      .replace(/&#x([0-9a-fA-F]+);/g, (_m, h: string) => String.fromCodePoint(parseInt(h, 16)))
      .replace(/&#(\d+);/g, (_m, d: string) => String.fromCodePoint(Number(d)))
      .replace(/%([0-9a-fA-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)))
      .replace(/\r\n/g, '');
  }
  return out;
}
