/**
 * The forms a model server may echo a key in, and a search for them that does not use the code
 * under test: the key plain, in hex (either case), and the part of its base64 and base64url that
 * depends on the key alone at each of the three byte offsets; searched in the text as it is and with
 * its character escapes (percent, JSON and JavaScript, HTML) decoded, a few layers deep.
 */

/** Texts that carry `key` in each encoding a server has been seen to use, to echo back. */
export function echoesOf(key: string): string[] {
  const bytes = Buffer.from(key);
  const percent = [...bytes].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  return [
    key,
    Buffer.from(key).toString('base64'),
    Buffer.from(`Bearer ${key}`).toString('base64'),
    Buffer.from(`x-api-key: ${key}`).toString('base64'),
    Buffer.from(`Authorization: Bearer ${key}`).toString('base64url'),
    Buffer.from(`xx${key}`).toString('base64url'),
    bytes.toString('hex'),
    bytes.toString('hex').toUpperCase(),
    percent,
    percent.toLowerCase(),
    encodeURIComponent(`key=${key}&x=1`),
    [...key].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''),
    `authorization: Bearer ${key}`,
    `"x-api-key": "${key}"`,
    `Cookie: session=${key}`,
  ];
}

/** Which forms of `secrets` appear in `text` (names like `base64@1 of sk-...`), as it is or decoded. */
export function encodedLeaks(text: string, secrets: readonly string[]): string[] {
  const texts = [text, decodeEscapes(text)];
  const found = new Set<string>();
  for (const secret of secrets) {
    for (const [name, form, anyCase] of formsOf(secret)) {
      for (const t of texts) {
        if (anyCase ? t.toLowerCase().includes(form.toLowerCase()) : t.includes(form)) found.add(`${name} of ${secret}`);
      }
    }
  }
  return [...found];
}

/** `[name, form, any case]` for each form of `secret`. */
function formsOf(secret: string): [string, string, boolean][] {
  const forms: [string, string, boolean][] = [
    ['plain', secret, false],
    ['hex', Buffer.from(secret).toString('hex'), true],
  ];
  for (const offset of [0, 1, 2]) {
    // Characters 4..(n-4) of the base64 of the key after `offset` bytes: stable whatever surrounds it.
    const encoded = Buffer.from(`${'\0'.repeat(offset)}${secret}`).toString('base64');
    const middle = encoded.slice(4, encoded.length - 4);
    forms.push([`base64@${offset}`, middle, false], [`base64url@${offset}`, middle.replaceAll('+', '-').replaceAll('/', '_'), false]);
  }
  return forms;
}

/** Character escapes decoded, three layers deep, and line breaks dropped. */
function decodeEscapes(text: string): string {
  let out = text;
  for (let layer = 0; layer < 3; layer += 1) {
    out = out
      .replace(/\\+u([0-9a-fA-F]{4})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)))
      .replace(/\\+x([0-9a-fA-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)))
      .replace(/\\+\//g, '/')
      .replace(/&#x([0-9a-fA-F]{1,6});/g, (_m, h: string) => String.fromCodePoint(parseInt(h, 16)))
      .replace(/&#(\d{1,7});/g, (_m, d: string) => String.fromCodePoint(Number(d)))
      .replace(/%([0-9a-fA-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16)));
  }
  return out.replace(/\r?\n/g, '');
}

/** The history's JSON followed by every payload's data, decoded from base64: details and results are payloads. */
export function historyWithPayloads(historyJson: string): string {
  const decoded = [...historyJson.matchAll(/"data":\s*"([A-Za-z0-9+/=]+)"/g)].map((m) => Buffer.from(m[1]!, 'base64').toString('utf8'));
  return [historyJson, ...decoded].join('\n');
}
