/**
 * The command's environment, built from scratch: nothing of the worker's own environment (where
 * the model's API key and the Temporal credentials live) reaches a command. The base is PATH,
 * HOME, LANG and TMPDIR; the caller adds variables explicitly, and a name that looks like a
 * credential is refused (`SecretEnvironmentError` naming it), as is a value holding a URL with a
 * password in it. The rule is by name and shape, so it is broad on purpose: a variable wrongly
 * refused costs the caller a rename, one wrongly passed is a leaked key.
 */
import { SandboxRequestError, SecretEnvironmentError } from './sandbox-errors';

/** The sandbox's HOME: an empty folder in its private `/tmp`. */
export const SANDBOX_HOME = '/tmp/home';
/** The sandbox's TMPDIR: its private tmpfs. */
export const SANDBOX_TMP = '/tmp';
/**
 * Where the worker's own programs offered to a command (`SandboxRequest.tools`: uv) are mounted,
 * read-only, one file each; first on the PATH when there are any. A folder no host path shares in
 * practice: nothing else of the host's `/opt` is mounted.
 */
export const SANDBOX_TOOLS_BIN = '/opt/loopwright/bin';

/** The variables every command starts with. */
export const BASE_ENV: Readonly<Record<string, string>> = {
  PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  HOME: SANDBOX_HOME,
  LANG: 'C.UTF-8',
  TMPDIR: SANDBOX_TMP,
};

/**
 * Name parts that make a variable a credential, matched case-insensitively anywhere in the name;
 * `AUTH` only as a word of its own or `AUTHORIZATION` (so `GIT_AUTHOR_NAME` passes).
 */
const SECRET_NAME_PARTS: readonly [string, RegExp][] = [
  ['KEY', /KEY/],
  ['TOKEN', /TOKEN/],
  ['SECRET', /SECRET/],
  ['PASSWORD', /PASSWORD/],
  ['PASSWD', /PASSWD/],
  ['PASSPHRASE', /PASSPHRASE/],
  ['CREDENTIAL', /CREDENTIAL/],
  ['AUTH', /(?:^|_)AUTH(?:$|_|ORIZATION)/],
  ['COOKIE', /COOKIE/],
  ['PRIVATE', /PRIVATE/],
];
/** Prefixes of variables read by cloud and model clients (their keys, endpoints and account ids). */
const SECRET_NAME_PREFIXES = [
  'AWS_',
  'OPENAI_',
  'ANTHROPIC_',
  'AZURE_',
  'GOOGLE_',
  'GCP_',
  'GCLOUD_',
  'CLOUDSDK_',
  'GEMINI_',
  'MISTRAL_',
  'COHERE_',
  'HF_',
  'HUGGING',
  'GITHUB_',
  'GH_',
  'GITLAB_',
  'NPM_',
  'DOCKER_',
  'VAULT_',
  'TEMPORAL_',
  'LOOPWRIGHT_',
  'DIGITALOCEAN_',
  'HCLOUD_',
  'OCI_',
  'ARM_',
  'TF_VAR_',
];
/** Whole names that carry credentials without saying so. */
const SECRET_NAMES = ['DATABASE_URL', 'PGPASS', 'PGPASSFILE', 'MYSQL_PWD', 'NETRC', 'KUBECONFIG', 'SSH_AUTH_SOCK', 'GPG_AGENT_INFO', 'SENTRY_DSN'];
/** A URL with a user and password in it: `scheme://user:password@host`. */
const URL_WITH_PASSWORD = /[a-z][a-z0-9+.-]*:\/\/[^\s/:@]*:[^\s/@]+@/i;
/** What a variable's name may be (POSIX portable names). */
const VALID_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Why `name` looks like a credential, or `undefined`. */
export function secretNameReason(name: string): string | undefined {
  const upper = name.toUpperCase();
  if (SECRET_NAMES.includes(upper)) return 'names a credential';
  const prefix = SECRET_NAME_PREFIXES.find((p) => upper.startsWith(p));
  if (prefix !== undefined) return `starts with ${prefix} (a cloud, model or CI client's settings)`;
  const part = SECRET_NAME_PARTS.find(([, pattern]) => pattern.test(upper));
  if (part !== undefined) return `looks like a credential (its name contains ${part[0]})`;
  return undefined;
}

/**
 * The environment of a command: `BASE_ENV` with `extra` over it. Throws `SecretEnvironmentError`
 * for a credential-like name or a value with a password in a URL, `SandboxRequestError` for a name
 * that is not a variable name or a value with a NUL byte.
 */
export function sandboxEnv(extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  const env: Record<string, string> = { ...BASE_ENV };
  for (const [name, value] of Object.entries(extra)) {
    if (!VALID_NAME.test(name)) throw new SandboxRequestError(`Invalid environment variable name ${JSON.stringify(name)}`, `env.${name}`);
    const reason = secretNameReason(name);
    if (reason !== undefined) throw new SecretEnvironmentError(name, reason);
    if (URL_WITH_PASSWORD.test(value)) throw new SecretEnvironmentError(name, 'holds a URL with a password');
    if (value.includes('\0')) throw new SandboxRequestError(`Environment variable ${name}: a NUL byte cannot be passed`, `env.${name}`);
    env[name] = value;
  }
  return env;
}
