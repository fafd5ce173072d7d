/**
 * The BMAD project the bmad-project example runs on, made by the real BMAD installer
 * (examples/bmad-project/install.sh, from npm) once and kept outside the clone, in
 * $LOOPWRIGHT_BMAD_CACHE (default ~/.cache/loopwright/bmad), as the real-model set-up keeps its
 * model. Each run works on a fresh copy, so what a session saves never piles up in the cache.
 * LOOPWRIGHT_BMAD_PROJECT names a project to copy instead (one made offline, or another release).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO, start } from './processes';

/** The release the example installs: the newest the conformance tests cover. */
export const BMAD_VERSION = '6.11.0';

/** A copy of the installed project in `scratch`, and a line saying where it came from. */
export async function bmadProject(scratch: string, env: NodeJS.ProcessEnv): Promise<{ project: string; note: string }> {
  const given = process.env.LOOPWRIGHT_BMAD_PROJECT;
  const source = given ? { project: path.resolve(given), note: `copied from LOOPWRIGHT_BMAD_PROJECT=${given}` } : await installed(env);
  if (!fs.existsSync(path.join(source.project, '_bmad'))) throw new Error(`${source.project} holds no _bmad/ folder: it is not a project made by the BMAD installer`);
  const project = path.join(scratch, 'bmad-project');
  fs.cpSync(source.project, project, { recursive: true });
  return { project, note: source.note };
}

/** The cached install, made now when missing. */
async function installed(env: NodeJS.ProcessEnv): Promise<{ project: string; note: string }> {
  const cache = process.env.LOOPWRIGHT_BMAD_CACHE ?? path.join(os.homedir(), '.cache', 'loopwright', 'bmad');
  const project = path.join(cache, `bmad-method-${BMAD_VERSION}-claude-code`);
  if (fs.existsSync(path.join(project, '_bmad'))) return { project, note: `installed earlier, cached in ${project}` };
  fs.mkdirSync(cache, { recursive: true });
  const partial = `${project}.partial-${process.pid}`;
  const started = Date.now();
  const install = start('bash', [path.join(REPO, 'examples', 'bmad-project', 'install.sh'), partial, BMAD_VERSION], { env });
  const timer = setTimeout(() => install.process.kill('SIGKILL'), 300_000);
  const code = await install.exited;
  clearTimeout(timer);
  if (code !== 0) {
    fs.rmSync(partial, { recursive: true, force: true });
    throw new Error(
      `The BMAD installer (npx bmad-method@${BMAD_VERSION} install) failed with status ${code}; it needs the npm registry once. ` +
        `Offline, set LOOPWRIGHT_BMAD_PROJECT to a project it made.\n${install.output().slice(-2000)}`,
    );
  }
  fs.renameSync(partial, project);
  return { project, note: `installed now with bmad-method@${BMAD_VERSION} in ${((Date.now() - started) / 1000).toFixed(1)} s, cached in ${project}` };
}
