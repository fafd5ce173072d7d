import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Default locations of Loopwright's local files. The project root is found by walking up from
 * this file to the package.json named `loopwright`, so it holds whether the code runs from the
 * sources (ts-node, Jest) or from a compiled `dist/` copy.
 */

let cachedRoot: string | undefined;

/** Absolute folder holding Loopwright's package.json. */
export function projectRoot(): string {
  if (cachedRoot !== undefined) return cachedRoot;
  let dir = __dirname;
  for (;;) {
    const manifest = path.join(dir, 'package.json');
    if (fs.existsSync(manifest) && readPackageName(manifest) === 'loopwright') {
      cachedRoot = dir;
      return dir;
    }
    const parent = path.dirname(dir);
    // Reaching the filesystem root means the layout is unexpected; the sources sit two levels
    // below the root (client/server), which is the best remaining guess.
    if (parent === dir) {
      cachedRoot = path.resolve(__dirname, '..', '..');
      return cachedRoot;
    }
    dir = parent;
  }
}

function readPackageName(manifest: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(manifest, 'utf8'));
    return typeof parsed === 'object' && parsed !== null && 'name' in parsed && typeof parsed.name === 'string'
      ? parsed.name
      : undefined;
  } catch (error) {
    // An unreadable or malformed package.json higher up is not ours; keep walking.
    if (error instanceof SyntaxError || (error as NodeJS.ErrnoException).code !== undefined) return undefined;
    throw error;
  }
}

/** Folder for the project-local Temporal tools: `LOOPWRIGHT_TOOLS_DIR`, else `<root>/.tools`. */
export function defaultToolsDir(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.LOOPWRIGHT_TOOLS_DIR;
  return fromEnv !== undefined && fromEnv !== '' ? path.resolve(fromEnv) : path.join(projectRoot(), '.tools');
}

/** Folder for the embedded server's state (SQLite file, logs, pid file): `LOOPWRIGHT_STATE_DIR`, else `<root>/.loopwright`. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.LOOPWRIGHT_STATE_DIR;
  return fromEnv !== undefined && fromEnv !== '' ? path.resolve(fromEnv) : path.join(projectRoot(), '.loopwright');
}
