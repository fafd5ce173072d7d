/**
 * Keeping secrets out of failure messages and logs. Model servers echo parts of a bad key back
 * ("Incorrect API key provided: sk-proj-****abcd"), and failures are stored in workflow history,
 * so every text that leaves the model activity goes through here.
 */

const REDACTED = '[redacted]';

/** Shortest configured secret we replace literally; shorter strings would mangle ordinary words. */
const MIN_SECRET_LENGTH = 4;

/** Replace each given secret, anything shaped like an OpenAI key, and bearer tokens. */
export function redactSecrets(text: string, secrets: readonly (string | undefined)[] = []): string {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= MIN_SECRET_LENGTH) out = out.split(secret).join(REDACTED);
  }
  return out
    .replace(/\bsk-[A-Za-z0-9_*.-]{4,}/g, `sk-${REDACTED}`)
    .replace(/\bBearer\s+[^\s"',]+/gi, `Bearer ${REDACTED}`);
}
