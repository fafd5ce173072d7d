/**
 * Loopwright's own folders: where its package is, and the local folders it keeps beside a checkout
 * or in the user's home for an installed package (the tools folder, the embedded server's state).
 * Here, under activities/, because the worker finds uv in the tools folder (commands/uv-tool.ts)
 * and the client finds the Temporal CLI there (client/server/project-paths.ts re-exports these).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

let cachedRoot: string | undefined;

/**
 * The folder holding Loopwright's package.json: the nearest one above this file named
 * `loopwright`, so it holds for the sources (ts-node, Jest) and a compiled `dist/` copy alike.
 */
export function projectRoot(): string {
  for (let dir = __dirname; cachedRoot === undefined; dir = path.dirname(dir)) {
    if (packageName(path.join(dir, 'package.json')) === 'loopwright') cachedRoot = dir;
    // The filesystem root: an unexpected layout; the sources sit one level below the root (activities/).
    else if (path.dirname(dir) === dir) cachedRoot = path.resolve(__dirname, '..');
  }
  return cachedRoot;
}

function packageName(manifest: string): unknown {
  try {
    return (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { name?: unknown } | null)?.name;
  } catch {
    // Missing, unreadable or malformed: not ours, keep walking.
    return undefined;
  }
}

/**
 * Whether this copy is a package installed under node_modules (rather than a checkout). An
 * installed package keeps no state inside node_modules: `npm install` may replace it at any time.
 */
export function isInstalledPackage(root: string = projectRoot()): boolean {
  return root.split(path.sep).includes('node_modules');
}

/** `variable` when set, else `<checkout>/<inCheckout>`, or `~/.loopwright/<installed>` for an installed package. */
function localFolder(env: NodeJS.ProcessEnv, variable: string, inCheckout: string, installed: string): string {
  const fromEnv = env[variable];
  if (fromEnv) return path.resolve(fromEnv);
  return isInstalledPackage() ? path.join(env.HOME || os.homedir(), '.loopwright', installed) : path.join(projectRoot(), inCheckout);
}

/** Folder for the Temporal CLI and uv: LOOPWRIGHT_TOOLS_DIR, else `.tools/`, or `~/.loopwright/tools` when installed. */
export function defaultToolsDir(env: NodeJS.ProcessEnv = process.env): string {
  return localFolder(env, 'LOOPWRIGHT_TOOLS_DIR', '.tools', 'tools');
}

/** Folder for the embedded server's SQLite file, log and pid file: LOOPWRIGHT_STATE_DIR, else `.loopwright/`, or `~/.loopwright/state` when installed. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  return localFolder(env, 'LOOPWRIGHT_STATE_DIR', '.loopwright', 'state');
}
