/**
 * A small bundle on disk for tool tests, and the RuntimeContext a session would have for it. Built
 * by hand (not by agent initialisation) so tool tests depend only on the tools.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { RuntimeContext } from '../../../common/runtime-context';
import { pathVariables } from '../../../bundle/variables';

export interface Fixture {
  /** Temp folder holding everything; remove with `cleanup`. */
  dir: string;
  /** project/ : the project root (holds the bundle and the output folder). */
  project: string;
  bundle: string;
  output: string;
  /** A folder outside every root, with a secret file in it. */
  outside: string;
  ctx: RuntimeContext;
  cleanup(): Promise<void>;
}

/** Writes `files` (relative path → content) under `root`, creating folders. */
export async function writeTree(root: string, files: Record<string, string | Buffer>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    const file = path.join(root, rel);
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, content);
  }
}

/** Creates the fixture: project/bundle with config.yaml and two workflows, project/out, outside/secret.txt. */
export async function makeFixture(options: { maxReadBytes?: number } = {}): Promise<Fixture> {
  const dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'loopwright-tools-')));
  const project = path.join(dir, 'project');
  const bundle = path.join(project, 'bundle');
  const output = path.join(project, 'out');
  const outside = path.join(dir, 'outside');
  await writeTree(bundle, {
    'config.yaml': 'user_name: Bryan\noutput_folder: "{project-root}/out"\nteam: "Team of {user_name}"\n',
    'workflows/intake/workflow.yaml': [
      'name: intake',
      'description: "Intake for {config_source}:team"',
      'config_source: "{bundle-root}/config.yaml"',
      'user_name: "{config_source}:user_name"',
      'output_folder: "{config_source}:output_folder"',
      'test_command: "{config_source}:run_tests_command"',
      'date: system-generated',
      'installed_path: "{bundle-root}/workflows/intake"',
      'instructions: "{installed_path}/instructions.md"',
      'template: "{installed_path}/template.md"',
      'default_output_file: "{output_folder}/requirements-{date}.md"',
      'variables:',
      '  story_dir: "{output_folder}/stories"',
      'later: "{{project_name}}"',
      '',
    ].join('\n'),
    'workflows/intake/instructions.md': '<step n="1" goal="Hear the idea"><ask>What is it?</ask></step>\n',
    'workflows/intake/template.md': '# Requirements for {{project_name}}\n',
    'workflows/plain/workflow.yaml': 'name: plain\ndescription: No template\ninstructions: "{installed_path}/steps.md"\ntemplate: false\n',
    'workflows/plain/steps.md': 'Just talk.\n',
    'notes.txt': 'héllo wörld\n',
  });
  await writeTree(outside, { 'secret.txt': 'top secret\n', 'config.yaml': 'user_name: Mallory\n' });
  await fs.mkdir(output, { recursive: true });
  const vars = pathVariables({ bundleRoot: bundle, coreRoot: bundle, projectRoot: project });
  const ctx: RuntimeContext = {
    bundleRoot: bundle,
    coreRoot: bundle,
    projectRoot: project,
    configPath: path.join(bundle, 'config.yaml'),
    variables: { ...vars, user_name: 'Bryan', output_folder: output },
    readRoots: [bundle, project],
    writeRoots: [output],
    maxReadBytes: options.maxReadBytes ?? 1024 * 1024,
  };
  return { dir, project, bundle, output, outside, ctx, cleanup: () => fs.rm(dir, { recursive: true, force: true }) };
}

/** Files in `dir` (recursively), as paths relative to it, sorted. */
export async function listFiles(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath ?? e.path, e.name)))
    .sort();
}
