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
  /** Roots a read may touch (bundle, core, project). */
  readRoots: string[];
  /** Roots a write may touch (the configured output folder(s)). */
  writeRoots: string[];
  /** Largest file `read_file` returns, in bytes. */
  maxReadBytes: number;
}
