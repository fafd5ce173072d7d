/** The scratch copy an eval session runs in: what is copied, where the session's paths point, what is refused. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeScratchWorkspace, projectFolderOf, ScratchCopyError } from '../../../activities/eval/scratch-copy';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lw-scratch-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function write(file: string, text = 'x'): void {
  fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
  fs.writeFileSync(path.join(dir, file), text);
}

test('scratch copy: the project with its bundle, without .git and node_modules; the paths point into the copy', async () => {
  write('project/bundle/config.yaml', 'a: 1\n');
  write('project/docs/prd.md', '# PRD\n');
  write('project/.git/HEAD');
  write('project/node_modules/x/index.js');
  write('project/bundle/node_modules/y.js');
  fs.symlinkSync('/etc/hostname', path.join(dir, 'project/link'));
  const project = path.join(dir, 'project');
  const copy = await makeScratchWorkspace({ bundlePath: path.join(project, 'bundle'), projectRoot: project, outputRoots: [path.join(project, 'docs')] }, path.join(dir, 'case'), 1_000_000);
  expect(copy.workspace).toBe(path.join(dir, 'case', 'workspace', 'project'));
  expect(copy.paths).toEqual({ bundlePath: path.join(copy.workspace, 'bundle'), projectRoot: copy.workspace, outputRoots: [path.join(copy.workspace, 'docs')] });
  expect(copy.mapped).toEqual({ [copy.workspace]: project });
  expect(fs.readFileSync(path.join(copy.workspace, 'docs/prd.md'), 'utf8')).toBe('# PRD\n');
  expect(fs.existsSync(path.join(copy.workspace, '.git'))).toBe(false);
  expect(fs.existsSync(path.join(copy.workspace, 'node_modules'))).toBe(false);
  expect(fs.existsSync(path.join(copy.workspace, 'bundle/node_modules'))).toBe(false);
  // A link is copied as a link, never followed.
  expect(fs.readlinkSync(path.join(copy.workspace, 'link'))).toBe('/etc/hostname');
  expect(copy.files).toBe(3);
});

test('scratch copy: a bundle outside the project is copied beside it; an output folder outside both, or a project too large, is refused', async () => {
  write('project/notes.md');
  write('skills/bundle/config.yaml');
  const copy = await makeScratchWorkspace({ bundlePath: path.join(dir, 'skills/bundle'), projectRoot: path.join(dir, 'project') }, path.join(dir, 'case'), 1_000_000);
  expect(copy.paths.bundlePath).toBe(path.join(dir, 'case', 'bundle', 'bundle'));
  expect(fs.existsSync(path.join(copy.paths.bundlePath, 'config.yaml'))).toBe(true);
  expect(Object.values(copy.mapped).sort()).toEqual([path.join(dir, 'project'), path.join(dir, 'skills/bundle')]);
  await expect(makeScratchWorkspace({ bundlePath: path.join(dir, 'project'), outputRoots: [path.join(dir, 'elsewhere')] }, path.join(dir, 'case2'), 1_000_000)).rejects.toThrow(
    /output folder .*elsewhere is outside the project/,
  );
  write('project/big.bin', 'y'.repeat(2_000));
  await expect(makeScratchWorkspace({ bundlePath: path.join(dir, 'project') }, path.join(dir, 'case3'), 1_000)).rejects.toThrow(ScratchCopyError);
  expect(fs.existsSync(path.join(dir, 'case3', 'workspace'))).toBe(false);
});

test('scratch copy: a bundle inside an installed BMAD tree copies the project that holds the tree', () => {
  expect(projectFolderOf({ bundlePath: '/p/_bmad/bmm' })).toBe('/p');
  expect(projectFolderOf({ bundlePath: '/p/bmad/custom/bundles/x' })).toBe('/p');
  expect(projectFolderOf({ bundlePath: '/p' })).toBe('/p');
  expect(projectFolderOf({ bundlePath: '/p/_bmad/bmm', projectRoot: '/q' })).toBe('/q');
});

test('scratch copy: a scratch folder inside the project (or inside a bundle outside it) is refused by name, before anything is copied', async () => {
  write('project/bundle/config.yaml', 'a: 1\n');
  write('elsewhere/bundle/config.yaml', 'a: 1\n');
  const project = path.join(dir, 'project');
  const inProject = path.join(project, '.eval-scratch', 'case-0');
  await expect(makeScratchWorkspace({ bundlePath: path.join(project, 'bundle'), projectRoot: project }, inProject, 1_000_000)).rejects.toThrow(
    new ScratchCopyError(`the eval's scratch folder ${inProject} lies inside ${project}, which it copies: give the eval a scratch folder outside the project (--scratch)`),
  );
  expect(fs.existsSync(inProject)).toBe(false);
  const outsideBundle = path.join(dir, 'elsewhere', 'bundle');
  const inBundle = path.join(outsideBundle, 'scratch');
  await expect(makeScratchWorkspace({ bundlePath: outsideBundle, projectRoot: project }, inBundle, 1_000_000)).rejects.toThrow(`lies inside ${outsideBundle}`);
  expect(fs.existsSync(inBundle)).toBe(false);
});
