/**
 * Where a command may write: the session's write roots, plus the artifact folders a BMAD config
 * names when the session writes that config's output folder (the folders skills' scripts, such as
 * BMAD 6.11's memlog.py, write to).
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { RuntimeContext } from '../../../common/runtime-context';
import { commandWriteRoots } from '../../../activities/tools/command-write-roots';

let project: string;
let outside: string;
beforeAll(async () => {
  const dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'lw-command-roots-')));
  project = path.join(dir, 'project');
  outside = path.join(dir, 'outside');
  await fs.mkdir(path.join(project, '_bmad'), { recursive: true });
  await fs.mkdir(outside);
  await fs.symlink(outside, path.join(project, 'link-out'));
});
afterAll(async () => {
  await fs.rm(path.dirname(project), { recursive: true, force: true });
});

const context = (variables: Record<string, string>, writeRoots = [path.join(project, '_bmad-output')]): RuntimeContext => ({
  bundleRoot: path.join(project, '_bmad'),
  coreRoot: path.join(project, '_bmad', 'core'),
  projectRoot: project,
  variables: { 'project-root': project, ...variables },
  readRoots: [project],
  writeRoots,
  protectedPaths: [path.join(project, '_bmad')],
  maxReadBytes: 1_000_000,
});

test('commandWriteRoots: artifact folders inside the output folder add nothing (the 6.11 defaults)', async () => {
  const ctx = context({
    output_folder: '_bmad-output',
    planning_artifacts: `${project}/_bmad-output/planning-artifacts`,
    implementation_artifacts: `${project}/_bmad-output/implementation-artifacts`,
  });
  expect(await commandWriteRoots(ctx)).toEqual([path.join(project, '_bmad-output')]);
});

test('commandWriteRoots: an artifact folder the config puts elsewhere in the project joins the roots', async () => {
  const ctx = context({ output_folder: '_bmad-output', planning_artifacts: `${project}/docs/planning`, implementation_artifacts: 'build/stories', project_knowledge: `${project}/docs` });
  expect(await commandWriteRoots(ctx)).toEqual([path.join(project, '_bmad-output'), path.join(project, 'build', 'stories'), path.join(project, 'docs', 'planning')]);
});

test('commandWriteRoots: never the project root, a protected path, a folder outside (as written or through a symlink), or one with a variable left', async () => {
  const ctx = context({
    output_folder: '_bmad-output',
    a_artifacts: project,
    b_artifacts: `${project}/_bmad/plans`,
    c_artifacts: outside,
    d_artifacts: `${project}/link-out/plans`,
    e_artifacts: '{project-root}/{missing}/plans',
    f_artifacts: '../elsewhere',
  });
  expect(await commandWriteRoots(ctx)).toEqual([path.join(project, '_bmad-output')]);
});

test("commandWriteRoots: the user's own output roots stay as they are", async () => {
  const ctx = context({ output_folder: '_bmad-output', planning_artifacts: `${project}/docs/planning` }, [outside]);
  expect(await commandWriteRoots(ctx)).toEqual([outside]);
  expect(await commandWriteRoots(context({ planning_artifacts: `${project}/docs/planning` }))).toEqual([path.join(project, '_bmad-output')]);
});
