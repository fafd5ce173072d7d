/**
 * Everything a tool needs to act for one agent session, produced once by agent initialisation and
 * passed (as recorded data) to every tool activity, so tools stay stateless.
 */
import type { CommandRules } from './commands/command-rules';

export interface RuntimeContext {
  /** Absolute, symlink-resolved folder of the bundle (the folder holding config.yaml, agents/, workflows/). */
  bundleRoot: string;
  /** Absolute folder of the BMAD core (`{core-root}`); the bundle root when the bundle has none. */
  coreRoot: string;
  /** Absolute project folder (`{project-root}`): for an installed tree, the folder holding `bmad/`. */
  projectRoot: string;
  /** The config.yaml loaded by critical actions (default `{config_source}`), if any. */
  configPath?: string;
  /** Variables known after critical actions: config keys (values fully resolved) and path variables. */
  variables: Record<string, string>;
  /** Roots a read may touch (bundle, core, project); real paths. */
  readRoots: string[];
  /**
   * Roots a write may touch, real paths: the user's `outputRoots`, else the bundle's configured
   * output folder, which initialisation requires to lie inside the project root.
   */
  writeRoots: string[];
  /**
   * Paths `save_output` never writes to, nor inside (as written and as real paths; a `*` segment
   * stands for any one name): every file the bundle loader would read next time, whatever folder
   * it is pointed at (agents, configs, manifests, `workflows/`, templates; an installed tree's
   * whole `bmad/`; `bmad/`, `agents/`, `config.yaml`, `bundle.yaml` in the bundle and project
   * folders and those between), and `.loopwright/secret-files`. See `protected-paths.ts`. Absent
   * or shorter in contexts recorded before: the tools add the rule rebuilt from the roots.
   */
  protectedPaths?: string[];
  /** The user lets tools read and write secret files (credentials, keys, `.env*`, `.git/`...). */
  allowSecretFiles?: boolean;
  /**
   * The project's (`.loopwright/secret-files`) and the session's (`secretFiles`) secret-file rules,
   * applied after the default list (see `secret-files.ts`); absent when there are none.
   */
  secretFiles?: SecretFileRule[];
  /** The user lets `read_file` read files with more than one hard link. */
  allowHardLinks?: boolean;
  /** Largest file `read_file` returns, in bytes. */
  maxReadBytes: number;
  /**
   * The project's Agent Skills folders (`<project>/.claude/skills`, ...), in precedence order, where
   * `activate_skill` finds a skill by name; absent when the project has none.
   */
  skillFolders?: string[];
  /** Commands are on (`commands.enabled`): how `run_command` runs them. Absent: no command tool. */
  commands?: CommandSettings;
  /**
   * The skills this session activated, newest first (set by the workflow from `activate_skill`'s
   * recorded results): a relative path `read_file` is given resolves from their folders first.
   * `commands`: the command patterns its `allowed-tools` asks for (requests the approval shows).
   */
  activeSkills?: { name: string; dir: string; hash?: string; commands?: string[] }[];
  /** The host whose workers hold the files (set by the session, see common/files-host.ts); a worker elsewhere refuses file tools. */
  filesHost?: string;
}

/** One secret-file rule of a project or session (gitignore syntax), with where it was written. */
export interface SecretFileRule {
  /** The pattern line: `*.secret`, `!docs/example.pem`. */
  pattern: string;
  /** `<file>:<line>`, or `the session setting secretFiles[<i>]`. */
  source: string;
}

/** How the command tool runs commands (from the session's `commands` settings). */
export interface CommandSettings {
  /** Let commands reach the network. */
  network: boolean;
  /** Where no sandbox can be made, run commands directly instead of refusing them (the operator's opt-in). */
  allowUnsandboxed: boolean;
  /** Longest one command may run, in milliseconds. */
  timeoutMs: number;
  /**
   * The rules commands are judged by (common/commands/command-rules.ts): the session's own, then
   * what initialisation adds (the bundle's deny rules and requests, the agent skill's requests, the
   * worker's rules), each naming its source. Absent: every command waits for a person.
   */
  rules?: CommandRules;
}
