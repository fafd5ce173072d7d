/**
 * Secret files: which files the tools never read nor write, so a project's credentials are not
 * handed to the model (every file read is sent to the model's server) nor overwritten by it. This
 * module holds the one list of them (`DEFAULT_SECRET_FILES`), the syntax of a project's own
 * changes to it, and the matching. The guard (`path-guard.ts`) applies it to every read and write,
 * after a path is known to lie inside the roots; the message of a refusal names the rule.
 *
 * Rules are lines in gitignore syntax (the `ignore` package implements it), matched against the
 * path below the root that holds it, by name only (contents are never sniffed), case ignored:
 * - a pattern without a slash (`*.pem`, `.npmrc`) matches a file or folder of that name at any
 *   depth; a folder matched makes everything inside it secret (and nothing inside can be let
 *   through again, as in git); `**\/.aws/**` makes everything inside every `.aws/` secret while
 *   still letting a later `!**\/.aws/config` through;
 * - a pattern with a slash at its start or in its middle is taken from the root: `/secrets/`,
 *   `config/master.key`; `**\/` matches any number of folders;
 * - `!pattern` lets through what an earlier line made secret; the last line that matches decides;
 * - blank lines and lines starting with `#` are ignored; `\#` and `\!` start a pattern with `#`, `!`.
 * A line that cannot be a useful pattern (a `..` or `.` segment, a lone `!`, an unclosed `[`, a
 * trailing backslash, a control character) is refused with `SecretFilesConfigError`, naming the
 * file (or setting) and the line.
 *
 * Rules are applied in this order, later ones winning: `DEFAULT_SECRET_FILES`; the project's file
 * `.loopwright/secret-files` (at the project root); the session's `secretFiles` setting. Both are
 * read at initialisation and recorded in the session's `RuntimeContext.secretFiles`, so every later
 * tool call (and a replay) uses the same rules. The user's `allowSecretFiles` lets every file
 * through. See `secret-file-overrides.ts` for the reading, and docs/concepts/security.md.
 */
import ignore, { type Ignore } from 'ignore';
import type { RuntimeContext, SecretFileRule } from '../../common/runtime-context';
import { BundleError } from '../errors';

/** Where the project's own changes to the list live, relative to the project root. */
export const SECRET_FILES_OVERRIDE = '.loopwright/secret-files';

/** A group of default rules and what the files it names are, for messages and the docs. */
export interface SecretFileGroup {
  /** What a file matched by these rules is: `a package manager's credentials file`. */
  what: string;
  patterns: readonly string[];
}

/**
 * The default secret files, in gitignore syntax (see the module comment). Broad on purpose: a file
 * wrongly refused costs the user one line in `.loopwright/secret-files`; a file wrongly read is a
 * leaked credential.
 */
export const DEFAULT_SECRET_FILES: readonly SecretFileGroup[] = [
  {
    what: 'an environment file',
    // `.env.example` too: a template often gets real values.
    patterns: ['.env', '.env.*', '.env-*', '.env_*', '.envrc'],
  },
  {
    what: 'a private key',
    // `id_rsa_github`, `id_ed25519.work` are keys; `id_rsa.pub` is not (let through before the folder
    // rules below, so `.ssh/id_rsa.pub` stays refused); `id_card.md` is no key name.
    patterns: ['id_rsa', 'id_rsa[._-]*', 'id_dsa', 'id_dsa[._-]*', 'id_ecdsa', 'id_ecdsa[._-]*', 'id_ed25519', 'id_ed25519[._-]*', 'id_xmss', 'id_xmss[._-]*', '!id_*.pub'],
  },
  {
    what: 'a key, certificate or keystore file',
    patterns: ['*.pem', '*.key', '*.p8', '*.p12', '*.pfx', '*.ppk', '*.jks', '*.jceks', '*.bks', '*.keystore', '*.kdbx', '*.keychain', '*.keychain-db', '*.ovpn'],
  },
  {
    what: 'inside a folder of keys or version-control internals',
    // `.git` as a name: a `.git` file pointing elsewhere would make git run that folder's hooks.
    patterns: ['.git', '**/.ssh/**', '**/.gnupg/**', '**/.password-store/**'],
  },
  {
    what: 'a credentials file',
    patterns: [
      '.netrc',
      '_netrc',
      '.pgpass',
      '.my.cnf',
      '.mylogin.cnf',
      '.git-credentials',
      '.gitcookies',
      '.htpasswd',
      '.vault-token',
      '.credentials',
      'credentials',
      'credentials.json',
      'credentials.toml',
      'credentials.yml',
      'credentials.yaml',
      'credentials.xml',
      '*_accessKeys.csv',
      '*credentials.csv',
      'secrets.json',
      'secrets.yml',
      'secrets.yaml',
      'secrets.toml',
      'auth.json',
      'client_secret*.json',
      'service-account*.json',
      '*-service-account.json',
      'application_default_credentials.json',
    ],
  },
  {
    what: "a cloud command-line tool's credentials or settings",
    patterns: [
      '**/.aws/**',
      '**/.azure/**',
      '**/.config/gcloud/**',
      '**/.oci/**',
      '**/.bluemix/**',
      '**/.ibmcloud/**',
      '**/.config/doctl/**',
      '**/.config/hcloud/**',
      '**/.config/gh/hosts.yml',
      '**/.config/hub',
      '**/.config/rclone/rclone.conf',
      '**/.config/configstore/firebase-tools.json',
      '.boto',
      '.s3cfg',
      '.passwd-s3fs',
    ],
  },
  {
    what: 'a Kubernetes or Docker configuration with credentials',
    patterns: ['**/.kube/**', 'kubeconfig', '*.kubeconfig', '**/.docker/config.json', '**/.docker/contexts/**', '.dockercfg'],
  },
  {
    what: "a package manager's credentials file",
    patterns: [
      '.npmrc',
      '.yarnrc.yml',
      '.pypirc',
      'pip.conf',
      'pip.ini',
      '**/.gem/credentials',
      '**/.cargo/credentials',
      '**/.cargo/credentials.toml',
      '**/.m2/settings.xml',
      '**/.m2/settings-security.xml',
      '**/.gradle/gradle.properties',
      '**/.composer/auth.json',
      '**/.nuget/**/NuGet.Config',
      '**/.bundle/config',
      '**/.ivy2/.credentials',
      '**/.sbt/.credentials',
    ],
  },
  {
    what: "an infrastructure tool's credentials or state",
    patterns: ['**/.terraform.d/credentials.tfrc.json', '.terraformrc', 'terraform.rc', '*.tfstate', '*.tfstate.*'],
  },
];

/** Where a default rule comes from, in messages. */
const DEFAULT_SOURCE = 'the default secret-file list';
/** How the source of a rule of the session setting starts. */
const SETTING_SOURCE = 'the session setting ';

/** What a matched rule says about a file. */
export interface SecretMatch {
  /** The pattern as written: `*.pem`, `**\/.aws/**`. */
  pattern: string;
  /** Where the rule comes from: the default list, `<file>:<line>`, `the session setting secretFiles[<i>]`. */
  source: string;
  /** What the file is: `a private key`; for a project's rule, `listed as secret by the project`. */
  what: string;
}

/** Options every guard call takes about secret files; `secretOptionsOf` makes them from a session. */
export interface SecretFileOptions {
  /** Let every secret file through: the user's own setting, never a bundle's. */
  allowSecretFiles?: boolean;
  /** The project's and the session's rules, applied after `DEFAULT_SECRET_FILES` (`RuntimeContext.secretFiles`). */
  secretFiles?: readonly SecretFileRule[];
}

/** The secret-file options of the session `ctx`; a context without `secretFiles` (recorded before it existed) gets the defaults. */
export function secretOptionsOf(ctx: Pick<RuntimeContext, 'allowSecretFiles' | 'secretFiles'>): SecretFileOptions {
  return {
    allowSecretFiles: ctx.allowSecretFiles === true,
    ...(ctx.secretFiles !== undefined && ctx.secretFiles.length > 0 ? { secretFiles: ctx.secretFiles } : {}),
  };
}

/** Paths a compiled list answers before it is compiled afresh: `ignore` keeps every answer, and a worker runs for weeks. */
const MAX_ANSWERS_KEPT = 10_000;

/** A compiled rule list; the marks carry each rule's source and meaning to the match. */
class Matcher {
  private readonly patterns: { pattern: string; mark: string }[] = [];
  private rules: Ignore;
  private answered = 0;

  constructor(extra: readonly SecretFileRule[]) {
    for (const group of DEFAULT_SECRET_FILES) {
      for (const pattern of group.patterns) this.patterns.push({ pattern, mark: JSON.stringify([DEFAULT_SOURCE, group.what]) });
    }
    for (const rule of extra) {
      const by = rule.source.startsWith(SETTING_SOURCE) ? 'the session setting' : 'the project';
      this.patterns.push({ pattern: rule.pattern, mark: JSON.stringify([rule.source, `listed as secret by ${by}`]) });
    }
    this.rules = this.compile();
  }

  match(relativePath: string): SecretMatch | undefined {
    if (++this.answered > MAX_ANSWERS_KEPT) {
      this.rules = this.compile();
      this.answered = 1;
    }
    const result = this.rules.test(relativePath);
    if (!result.ignored || result.rule === undefined) return undefined;
    const [source, what] = JSON.parse(result.rule.mark ?? '[]') as [string?, string?];
    return { pattern: result.rule.pattern, source: source ?? DEFAULT_SOURCE, what: what ?? 'a secret file' };
  }

  private compile(): Ignore {
    return ignore({ ignorecase: true }).add(this.patterns);
  }
}

const DEFAULT_MATCHER = new Matcher([]);
/** Compiled lists of sessions seen lately, by their rules (a worker runs many sessions of few projects). */
const matchers = new Map<string, Matcher>();
const MAX_CACHED_MATCHERS = 32;

function matcherFor(extra: readonly SecretFileRule[] | undefined): Matcher {
  if (extra === undefined || extra.length === 0) return DEFAULT_MATCHER;
  const key = JSON.stringify(extra);
  let matcher = matchers.get(key);
  if (matcher === undefined) {
    matcher = new Matcher(extra);
    if (matchers.size >= MAX_CACHED_MATCHERS) matchers.delete(matchers.keys().next().value as string);
    matchers.set(key, matcher);
  }
  return matcher;
}

/**
 * The rule that makes `relativePath` (a path below a root, either separator) a secret file, after
 * the defaults and then `extra`; `undefined` when it is not one. The root itself is never secret.
 */
export function secretMatch(relativePath: string, extra?: readonly SecretFileRule[]): SecretMatch | undefined {
  const parts = relativePath.split(/[\\/]+/).filter((part) => part !== '' && part !== '.');
  if (parts.length === 0 || parts.includes('..')) return undefined;
  return matcherFor(extra).match(parts.join('/'));
}

/** What kind of secret `relativePath` (a path below a root) is by the default list, e.g. `an environment file`. */
export function secretKind(relativePath: string): string | undefined {
  return secretMatch(relativePath)?.what;
}

/** Whether `relativePath` (a path below a root) is a secret file by the default list. */
export function isSecretPath(relativePath: string): boolean {
  return secretMatch(relativePath) !== undefined;
}

/**
 * The rules of `text` (lines in the syntax of the module comment), each with its source
 * `<where>:<line>`; blank lines and comments are skipped. Throws `SecretFilesConfigError` naming
 * `where` and the line for a line that cannot be a pattern.
 */
export function parseSecretFileRules(text: string, where: { file?: string; setting?: string }): SecretFileRule[] {
  const rules: SecretFileRule[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const rule = parseLine(raw, index + 1, where);
    if (rule !== undefined) rules.push(rule);
  });
  return rules;
}

/** The rules of the session setting `secretFiles` (one line per entry, the same syntax). */
export function parseSecretFileSetting(lines: readonly string[]): SecretFileRule[] {
  const rules: SecretFileRule[] = [];
  lines.forEach((line, index) => {
    if (typeof line !== 'string' || /[\r\n]/.test(line)) {
      throw new SecretFilesConfigError({ setting: 'secretFiles' }, index + 1, String(line), 'one pattern per entry, on one line');
    }
    const rule = parseLine(line, index + 1, { setting: 'secretFiles' });
    if (rule !== undefined) rules.push(rule);
  });
  return rules;
}

function parseLine(raw: string, line: number, where: { file?: string; setting?: string }): SecretFileRule | undefined {
  // Trailing white space is not part of a pattern in gitignore, unless escaped.
  const text = raw.replace(/(?<!\\)\s+$/, '');
  if (text === '' || text.startsWith('#')) return undefined;
  const problem = lineProblem(text);
  if (problem !== undefined) throw new SecretFilesConfigError(where, line, raw, problem);
  try {
    ignore().add(text).test('probe');
  } catch (error) {
    throw new SecretFilesConfigError(where, line, raw, (error as Error).message);
  }
  const source = where.file !== undefined ? `${where.file}:${line}` : `${SETTING_SOURCE}${where.setting ?? 'secretFiles'}[${line - 1}]`;
  return { pattern: text, source };
}

/** Why `text` (a non-blank, non-comment line) cannot be a useful pattern, or `undefined`. */
function lineProblem(text: string): string | undefined {
  if ([...text].some((ch) => ch !== '\t' && (ch < ' ' || ch === '\u007f'))) return 'a control character is no part of a file name';
  if (/^\s/.test(text)) return 'leading white space would be part of the pattern; remove it';
  const body = text.startsWith('!') ? text.slice(1) : text;
  if (body.trim() === '') return 'a lone "!" names no pattern';
  if (/^\/+$/.test(body.trim())) return 'the pattern names no file';
  if (/(?:^|\/)\.\.?(?:\/|$)/.test(body)) return 'a "." or ".." segment matches nothing: patterns are taken from the project root';
  if (/(?:^|[^\\])(?:\\\\)*\\$/.test(body)) return 'a trailing backslash escapes nothing';
  if (unclosedBracket(body)) return 'an unclosed "[" (write "\\[" for the character itself)';
  return undefined;
}

function unclosedBracket(text: string): boolean {
  let open = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '\\') i++;
    else if (!open && ch === '[') open = true;
    else if (open && ch === ']') open = false;
  }
  return open;
}

/** A secret file (see the module comment) inside the roots, refused unless the user allows secret files. */
export class SecretFileError extends BundleError {
  /** What the file is, by the rule: `a private key`. */
  readonly kind: string;
  /** The pattern that matched, as written. */
  readonly rule: string;
  /** Where that pattern comes from (see `SecretMatch.source`). */
  readonly source: string;

  constructor(file: string, match: SecretMatch, access: 'read' | 'write') {
    const what = access === 'read' ? 'are not read' : 'are not written';
    super(
      `Secret file refused: ${file} is ${match.what} (rule "${match.pattern}" of ${match.source}). Secret files ` +
        `(credentials, keys, .env*, .git/, cloud and package-manager logins) ${what} unless the user allows them: ` +
        `the allowSecretFiles setting, or a "!<pattern>" line in ${SECRET_FILES_OVERRIDE} at the project root`,
      { file },
    );
    this.kind = match.what;
    this.rule = match.pattern;
    this.source = match.source;
  }
}

/**
 * A line of `.loopwright/secret-files` (or of the `secretFiles` setting) that is not a usable
 * pattern, or a file of rules that cannot be used at all (`line` then absent).
 */
export class SecretFilesConfigError extends BundleError {
  /** 1-based line of the file, or of the setting's list. */
  readonly line?: number;

  constructor(where: { file?: string; setting?: string }, line: number | undefined, text: string | undefined, problem: string) {
    const setting = where.setting ?? 'secretFiles';
    const place = line === undefined ? (where.file ?? `the session setting ${setting}`) : where.file !== undefined ? `${where.file}, line ${line}` : `the session setting ${setting}[${line - 1}]`;
    const shown = text === undefined ? '' : `${JSON.stringify(text)}: `;
    super(`Invalid secret-file rule${line === undefined ? 's' : ''} in ${place}: ${shown}${problem}`, {
      ...(where.file !== undefined ? { file: where.file } : {}),
      ...(line === undefined ? {} : { field: where.file !== undefined ? `line ${line}` : `${setting}[${line - 1}]` }),
    });
    if (line !== undefined) this.line = line;
  }
}
