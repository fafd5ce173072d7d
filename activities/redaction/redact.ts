/**
 * Keeping secrets out of failure messages, logs and replies. Model servers echo parts of a bad key
 * back ("Incorrect API key provided: sk-proj-****abcd"), sometimes whole and encoded (base64 of the
 * request's `Authorization` header, percent- or JSON-escaped; secret-forms.ts finds those), and
 * failures and replies are stored in workflow history, so every text that leaves the model activity
 * goes through here.
 */
import { replaceSpans, secretSpans } from './secret-forms';

export { MIN_SECRET_LENGTH } from './secret-forms';

const REDACTED = '[redacted]';

/**
 * Credential headers and fields a server may quote from the request (`authorization: Bearer ...`,
 * `"x-api-key": "..."`, `api_key=...`), with an optional quote (JSON-escaped too) around the name
 * and before the value, and an optional auth scheme. The value ends at white space, a quote, a
 * backslash or a separator. No two adjacent quantifiers match the same characters, so a match
 * attempt is linear in the white space it crosses.
 */
const CREDENTIAL_FIELD =
  /\b(proxy-authorization|authorization|x-api-key|api-key|x-goog-api-key|x-auth-token|x-amz-security-token|api_key|apikey|access_token|client_secret)((?:\\?["'])?[ \t]*[:=][ \t]*(?:\\?["'])?)((?:(?:bearer|basic|token|apikey|digest)[ \t]+)?)[^\s"'\\,;&]+/gi;

/** Cookies, whose values hold `;` and `=`: everything up to the line's end or a closing quote. */
const COOKIE_FIELD = /\b(set-cookie|cookie)((?:\\?["'])?[ \t]*:[ \t]*(?:\\?["'])?)[^\s"\\][^\r\n"\\]*/gi;

/**
 * Replace each given secret in every form it may be quoted in (secret-forms.ts), anything shaped
 * like an OpenAI key, bearer tokens, credential headers and fields quoted from a request, and the
 * userinfo (`user:pass@`) of any URL in the text. For failures and logs, where a server's own words
 * are quoted: linear patterns only (no nested or overlapping quantifiers), so a hostile server
 * message cannot make redaction slow.
 */
export function redactSecrets(text: string, secrets: readonly (string | undefined)[] = []): string {
  return (
    redactKnownSecrets(text, secrets)
      .replace(/\bsk-[A-Za-z0-9_*.-]{4,}/g, `sk-${REDACTED}`)
      .replace(/\bBearer\s+[^\s"',\\]+/gi, `Bearer ${REDACTED}`)
      .replace(CREDENTIAL_FIELD, `$1$2$3${REDACTED}`)
      .replace(COOKIE_FIELD, `$1$2${REDACTED}`)
      // Credentials of URLs we were not told about (a proxy, a redirect) and passwords too short to
      // be listed as secrets, up to the authority's last '@' as URL parsers read it. The run stops
      // at '/', so it never reaches past the next '://' and each character is scanned at most twice.
      .replace(/:\/\/[^\s/?#]+@/g, `://${REDACTED}@`)
  );
}

/**
 * Replace only the given secrets, in every form they may be quoted in. For the model's replies: they
 * are the conversation, where a pattern for key-like text or headers would mangle ordinary answers
 * (an example `curl -H "Authorization: Bearer $KEY"`), while the worker's own key has no place in them.
 */
export function redactKnownSecrets(text: string, secrets: readonly (string | undefined)[] = []): string {
  const listed = secrets.filter((s): s is string => typeof s === 'string');
  return replaceSpans(text, secretSpans(text, listed), REDACTED);
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
