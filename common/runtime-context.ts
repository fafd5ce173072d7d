/**
 * Everything a tool needs to act for one agent session, produced once by agent initialisation and
 * passed (as recorded data) to every tool activity, so tools stay stateless.
 */
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
   * Real paths `save_output` never writes to, nor inside: the bundle's own files (agent files,
   * config, manifest, `agents/`, `workflows/`, templates...; an installed tree's whole `bmad/`).
   * Absent in contexts recorded before it existed: the tools then rebuild it from the roots.
   */
  protectedPaths?: string[];
  /** The user lets tools read and write secret files (`.env*`, `.ssh/`, `.git/`, private keys). */
  allowSecretFiles?: boolean;
  /** The user lets `read_file` read files with more than one hard link. */
  allowHardLinks?: boolean;
  /** Largest file `read_file` returns, in bytes. */
  maxReadBytes: number;
}
