/**
 * Keeping secrets out of failure messages and logs. Model servers echo parts of a bad key back
 * ("Incorrect API key provided: sk-proj-****abcd"), and failures are stored in workflow history,
 * so every text that leaves the model activity goes through here.
 */

const REDACTED = '[redacted]';

/** Shortest configured secret we replace literally; shorter strings would mangle ordinary words. */
const MIN_SECRET_LENGTH = 4;

/**
 * Replace each given secret, anything shaped like an OpenAI key, bearer tokens, and the userinfo
 * (`user:pass@`) of any URL in the text. The patterns are linear: no nested or overlapping
 * quantifiers, so a hostile server message cannot make redaction slow.
 */
export function redactSecrets(text: string, secrets: readonly (string | undefined)[] = []): string {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= MIN_SECRET_LENGTH) out = out.split(secret).join(REDACTED);
  }
  return (
    out
      .replace(/\bsk-[A-Za-z0-9_*.-]{4,}/g, `sk-${REDACTED}`)
      .replace(/\bBearer\s+[^\s"',]+/gi, `Bearer ${REDACTED}`)
      // Credentials of URLs we were not told about (a proxy, a redirect) and passwords too short to
      // be listed as secrets, up to the authority's last '@' as URL parsers read it. The run stops
      // at '/', so it never reaches past the next '://' and each character is scanned at most twice.
      .replace(/:\/\/[^\s/?#]+@/g, `://${REDACTED}@`)
  );
}

/**
 * `url` without its userinfo (`http://user:pass@host/v1` becomes `http://host/v1`), for messages
 * and logs. A URL without credentials comes back exactly as given, so hints show what the operator
 * configured. A string the URL class cannot parse is cut at its last '@' before the path instead:
 * it may still hold credentials, and it is printed all the same.
 */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return stripUserinfo(url);
  }
  if (parsed.username === '' && parsed.password === '') return url;
  parsed.username = '';
  parsed.password = '';
  return parsed.href;
}

/**
 * The username and password of `url`, to hand to `redactSecrets`: a client error may quote the URL
 * as it was configured, or just the password. Both the percent-encoded form (as the URL holds it)
 * and the decoded one (as a person typed it) are returned. Empty when there are none or the URL
 * does not parse.
 */
export function secretsOfUrl(url: string | undefined): string[] {
  if (!url) return [];
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [];
  }
  const secrets = new Set<string>();
  for (const part of [parsed.password, parsed.username]) {
    if (part === '') continue;
    secrets.add(part);
    secrets.add(decoded(part));
  }
  // Longest first: replacing a username that is part of the password would leave the rest visible.
  return [...secrets].sort((a, b) => b.length - a.length);
}

/**
 * Everything from the start of the authority (after '://', a leading '//', or else the start) to
 * its last '@' removed; linear, no regular expression.
 */
function stripUserinfo(url: string): string {
  const scheme = url.indexOf('://');
  const start = scheme !== -1 ? scheme + 3 : url.startsWith('//') ? 2 : 0;
  let end = url.length;
  for (const stop of ['/', '?', '#']) {
    const at = url.indexOf(stop, start);
    if (at !== -1 && at < end) end = at;
  }
  const at = url.lastIndexOf('@', end - 1);
  if (at < start) return url;
  return url.slice(0, start) + url.slice(at + 1);
}

function decoded(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
