/**
 * Secret files are never handed to the model: credential files of every common tool, refused by
 * every read path (read_file, a critical action's load, execute_workflow's files, validate) and by
 * writes; a project changes the list in `.loopwright/secret-files` (which the model cannot write),
 * a session in its `secretFiles` setting; files merely named like secrets stay readable.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { executeWorkflowTool } from '../../activities/tools/execute-workflow';
import { readFileTool } from '../../activities/tools/read-file';
import { saveOutputTool } from '../../activities/tools/save-output';
import { initializeAgent, type InitializeAgentInput } from '../../bundle/initialize-agent';
import { guardRead } from '../../bundle/sandbox/path-guard';
import { validateBundle } from '../../bundle/validate';
import type { RuntimeContext } from '../../common/runtime-context';
import { makeBundle, makeTempDir, sourceAgent, writeTree } from '../unit/bundle/fixtures';
import { makeFixture, type Fixture } from '../unit/tools/fixture';

/** What a leaked file would show: never in a result, a message or an error. */
const TOKEN = 'npm_SECRETtoken0123456789';

/** Credential files of common tools, each as it lies in a project (or a home folder used as one). */
const SECRETS = [
  '.npmrc',
  '.pypirc',
  '.git-credentials',
  'credentials.json',
  '.aws/credentials',
  '.aws/config',
  '.docker/config.json',
  '.kube/config',
  '.ssh/id_ed25519',
  '.ssh/config',
  'id_rsa',
  'deploy/id_ecdsa_ci',
  'certs/server.pem',
  'tls/server.key',
  '.netrc',
  '.env.production',
  '.azure/accessTokens.json',
  '.config/gcloud/application_default_credentials.json',
  '.config/gcloud/credentials.db',
  '.oci/config',
  '.yarnrc.yml',
  '.gem/credentials',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.m2/settings.xml',
  '.m2/settings-security.xml',
  '.gradle/gradle.properties',
  '.composer/auth.json',
  '.nuget/NuGet/NuGet.Config',
  '.htpasswd',
  '.terraform.d/credentials.tfrc.json',
  'infra/terraform.tfstate',
  '.vault-token',
  'android/release.keystore',
  'keys/signing.jks',
  'certs/client.p12',
  'gcp/service-account.json',
  'client_secret_1234.apps.googleusercontent.com.json',
  'services/api/.npmrc',
  '.config/gh/hosts.yml',
];

/** Files named like secrets that are not: always readable. */
const NOT_SECRETS = [
  'keyboard.md',
  'docs/credentials-guide.md',
  'docs/aws-setup.md',
  'docs/npmrc-notes.md',
  'docs/kubernetes.md',
  'id_card.md',
  'keys/id_rsa.pub',
  'monkey.txt',
  'environment.md',
  'docs/.envoy.md',
  'gradle.properties',
  'config/settings.xml',
  'secret.txt',
  'docker/config.json',
  '.github/workflows/ci.yml',
  '.gitignore',
];

describe('every read path refuses the default secret files', () => {
  let fx: Fixture;
  beforeEach(async () => {
    fx = await makeFixture();
  });
  afterEach(async () => {
    await fx.cleanup();
  });

  test.each(SECRETS)('read_file: %s is refused, naming the file and the rule', async (rel) => {
    await writeTree(fx.project, { [rel]: `token=${TOKEN}\n` });
    const result = await readFileTool(fx.ctx, { file_path: `{project-root}/${rel}` });
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/^Secret file refused: /);
    expect(result.error).toContain(path.join(fx.project, rel));
    expect(result.error).toMatch(/rule "[^"]+" of the default secret-file list/);
    expect(result.error).toContain('allowSecretFiles');
    expect(JSON.stringify(result)).not.toContain(TOKEN);
  });

  test.each(SECRETS)('execute_workflow: a workflow whose template is %s does not hand it over', async (rel) => {
    await writeTree(fx.project, { [rel]: `token=${TOKEN}\n` });
    await writeTree(fx.bundle, { 'workflows/leak/workflow.yaml': `name: leak\ninstructions: "{installed_path}/steps.md"\ntemplate: "{project-root}/${rel}"\n`, 'workflows/leak/steps.md': 'Go.\n' });
    const result = await executeWorkflowTool(fx.ctx, { workflow_path: '{bundle-root}/workflows/leak/workflow.yaml' });
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/Secret file refused/);
    expect(JSON.stringify(result)).not.toContain(TOKEN);
  });

  test.each(NOT_SECRETS)('read_file: %s is not a secret and is read', async (rel) => {
    await writeTree(fx.project, { [rel]: 'fine\n' });
    await expect(readFileTool(fx.ctx, { file_path: `{project-root}/${rel}` })).resolves.toMatchObject({ success: true, content: 'fine\n' });
  });

  test('the refusal is a typed SecretFileError with the rule and where it comes from', async () => {
    await writeTree(fx.project, { '.aws/credentials': TOKEN });
    const error = await guardRead(path.join(fx.project, '.aws/credentials'), fx.ctx.readRoots).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'SecretFileError', file: path.join(fx.project, '.aws/credentials'), rule: '**/.aws/**', source: 'the default secret-file list' });
  });

  test('save_output: the same files are never written either', async () => {
    const ctx = { ...fx.ctx, writeRoots: [fx.project] };
    for (const rel of ['.npmrc', '.aws/credentials', '.kube/config', '.docker/config.json', '.git-credentials', 'credentials.json']) {
      const result = await saveOutputTool(ctx, { file_path: path.join(fx.project, rel), content: TOKEN });
      expect(result).toMatchObject({ success: false, error: expect.stringMatching(/^Secret file refused/) });
      await expect(fs.access(path.join(fx.project, rel))).rejects.toThrow();
    }
  });

  test('allowSecretFiles (the user setting) still lets every one through', async () => {
    const ctx = { ...fx.ctx, allowSecretFiles: true };
    for (const rel of ['.npmrc', '.aws/credentials', '.kube/config']) {
      await writeTree(fx.project, { [rel]: TOKEN });
      await expect(readFileTool(ctx, { file_path: `{project-root}/${rel}` })).resolves.toMatchObject({ success: true, content: TOKEN });
    }
  });
});

describe('critical actions', () => {
  let tmp: string;
  beforeEach(async () => {
    tmp = await makeTempDir('lw-secret-');
  });
  afterEach(async () => {
    await fs.rm(tmp, { recursive: true, force: true });
  });

  /** A stand-alone bundle whose agent loads `{project-root}/<rel>`, with its project (holding `files`) apart. */
  async function session(rel: string, files: Record<string, string>, extra: Partial<InitializeAgentInput> = {}) {
    const project = path.join(tmp, 'project');
    await writeTree(project, files);
    const bundle = await makeBundle(path.join(tmp, 'bundle'), {
      agent: sourceAgent(['Load into memory {bundle-root}/config.yaml and set variables: user_name', `Load COMPLETE file {project-root}/${rel}`]),
    });
    return { project, bundle, input: { bundlePath: bundle, agentId: 'alex', projectRoot: project, ...extra } };
  }

  test.each(SECRETS)('a critical action loading %s is refused and its content never reaches a message', async (rel) => {
    const { input } = await session(rel, { [rel]: `token=${TOKEN}\n` });
    const error = (await initializeAgent(input).catch((e: unknown) => e)) as Error;
    expect(error).toMatchObject({ name: 'CriticalActionError' });
    expect(error.message).toMatch(/Secret file refused/);
    expect(error.message).not.toContain(TOKEN);
  });

  test.each(NOT_SECRETS)('a critical action loading %s still loads it', async (rel) => {
    const { input, project } = await session(rel, { [rel]: 'fine\n' });
    const { messages } = await initializeAgent(input);
    expect(messages.map((m) => m.content)).toContain(`[Critical Action] Loaded file: ${path.join(project, rel)}\n\nfine\n`);
  });
});

describe('a project changes the list in .loopwright/secret-files, a session in secretFiles', () => {
  let tmp: string;
  let project: string;
  let bundle: string;
  beforeEach(async () => {
    tmp = await makeTempDir('lw-secret-');
    project = path.join(tmp, 'project');
    bundle = await makeBundle(path.join(tmp, 'bundle'));
    await fs.mkdir(project);
  });
  afterEach(async () => {
    await fs.rm(tmp, { recursive: true, force: true });
  });

  async function contextWith(rules: string | undefined, extra: Partial<InitializeAgentInput> = {}): Promise<RuntimeContext> {
    if (rules !== undefined) await writeTree(project, { '.loopwright/secret-files': rules });
    return (await initializeAgent({ bundlePath: bundle, agentId: 'alex', projectRoot: project, ...extra })).context;
  }

  const read = (ctx: RuntimeContext, rel: string) => readFileTool(ctx, { file_path: `{project-root}/${rel}` });

  test('a line adds a pattern: read_file and critical actions refuse it, naming the file and line', async () => {
    await writeTree(project, { 'notes.secret': TOKEN, 'private/plan.md': TOKEN, 'docs/private/ok.md': 'fine\n' });
    const ctx = await contextWith('# our own secrets\n*.secret\n\n/private/\n');
    const file = path.join(project, '.loopwright/secret-files');
    expect(ctx.secretFiles).toEqual([
      { pattern: '*.secret', source: `${file}:2` },
      { pattern: '/private/', source: `${file}:4` },
    ]);
    const refused = await read(ctx, 'notes.secret');
    expect(refused).toMatchObject({ success: false });
    expect(refused.error).toContain(`rule "*.secret" of ${file}:2`);
    expect(JSON.stringify(refused)).not.toContain(TOKEN);
    expect((await read(ctx, 'private/plan.md')).error).toContain(`rule "/private/" of ${file}:4`);
    // Anchored to the project root, as in a .gitignore.
    await expect(read(ctx, 'docs/private/ok.md')).resolves.toMatchObject({ success: true });

    await fs.writeFile(path.join(bundle, 'agents/alex.md'), sourceAgent(['Load COMPLETE file {project-root}/notes.secret']));
    await expect(initializeAgent({ bundlePath: bundle, agentId: 'alex', projectRoot: project })).rejects.toThrow(/Secret file refused: .*notes\.secret.*rule "\*\.secret"/s);
  });

  test('!pattern lets a default through, and only that', async () => {
    await writeTree(project, { '.npmrc': 'registry=https://registry.example\n', '.aws/config': '[default]\nregion=eu-west-1\n', '.aws/credentials': TOKEN });
    const ctx = await contextWith('!.npmrc\n!**/.aws/config\n');
    await expect(read(ctx, '.npmrc')).resolves.toMatchObject({ success: true, content: 'registry=https://registry.example\n' });
    await expect(read(ctx, '.aws/config')).resolves.toMatchObject({ success: true });
    expect(await read(ctx, '.aws/credentials')).toMatchObject({ success: false, error: expect.stringMatching(/Secret file refused/) });

    await fs.writeFile(path.join(bundle, 'agents/alex.md'), sourceAgent(['Load COMPLETE file {project-root}/.npmrc']));
    const { messages } = await initializeAgent({ bundlePath: bundle, agentId: 'alex', projectRoot: project });
    expect(messages[1].content).toBe(`[Critical Action] Loaded file: ${path.join(project, '.npmrc')}\n\nregistry=https://registry.example\n`);
  });

  test('the session setting secretFiles works both ways and comes after the project file', async () => {
    await writeTree(project, { '.npmrc': 'x\n', '.pypirc': 'y\n', 'extra/a.txt': TOKEN });
    const ctx = await contextWith('!.npmrc\n', { secretFiles: ['.npmrc', '!.pypirc', 'extra/*.txt'] });
    expect((await read(ctx, '.npmrc')).error).toContain('rule ".npmrc" of the session setting secretFiles[0]');
    await expect(read(ctx, '.pypirc')).resolves.toMatchObject({ success: true, content: 'y\n' });
    expect((await read(ctx, 'extra/a.txt')).error).toContain('rule "extra/*.txt" of the session setting secretFiles[2]');
  });

  test('execute_workflow and save_output follow the same rules: a project pattern refuses both, a ! line lets both through', async () => {
    await writeTree(project, {
      'wf/workflow.yaml': 'name: wf\ninstructions: "{installed_path}/steps.md"\ntemplate: "{project-root}/notes.secret"\n',
      'wf/steps.md': 'Steps.\n',
      'notes.secret': TOKEN,
      'wf2/workflow.yaml': 'name: wf2\ninstructions: "{installed_path}/steps.md"\ntemplate: "{project-root}/.npmrc"\n',
      'wf2/steps.md': 'Steps.\n',
      '.npmrc': 'registry=https://registry.example\n',
    });
    const ctx = await contextWith('*.secret\n!.npmrc\n', { outputRoots: [project] });
    const refused = await executeWorkflowTool(ctx, { workflow_path: '{project-root}/wf/workflow.yaml' });
    expect(JSON.stringify(refused)).not.toContain(TOKEN);
    expect(JSON.stringify(refused)).toMatch(/rule \\"\*\.secret\\"/);
    const allowed = await executeWorkflowTool(ctx, { workflow_path: '{project-root}/wf2/workflow.yaml' });
    expect(JSON.stringify(allowed)).toContain('registry=https://registry.example');
    expect(await saveOutputTool(ctx, { file_path: `${project}/draft.secret`, content: 'x' })).toMatchObject({ success: false, error: expect.stringContaining('rule "*.secret"') });
    await expect(saveOutputTool(ctx, { file_path: `${project}/.npmrc`, content: 'registry=https://other.example\n' })).resolves.toMatchObject({ success: true });
  });

  test('the rules are recorded at initialisation: a later change of the file does not change a running session', async () => {
    await writeTree(project, { 'notes.secret': TOKEN });
    const ctx = await contextWith('*.secret\n');
    await fs.rm(path.join(project, '.loopwright'), { recursive: true });
    expect(await read(ctx, 'notes.secret')).toMatchObject({ success: false });
    // The recorded context is plain data (it is in the workflow history).
    expect(JSON.parse(JSON.stringify(ctx))).toEqual(ctx);
  });

  test('a malformed line is a typed error naming the file and the line', async () => {
    const file = path.join(project, '.loopwright/secret-files');
    for (const [rules, line] of [
      ['*.secret\n!\n', 2],
      ['ok\n../outside\n', 2],
      ['[unclosed\n', 1],
      ['  leading\n', 1],
      ['a\\\n', 1],
    ] as const) {
      await writeTree(project, { '.loopwright/secret-files': rules });
      const error = (await initializeAgent({ bundlePath: bundle, agentId: 'alex', projectRoot: project }).catch((e: unknown) => e)) as Error & { line?: number };
      expect(error).toMatchObject({ name: 'SecretFilesConfigError', file, line });
      expect(error.message).toContain(`${file}, line ${line}`);
    }
    await writeTree(project, { '.loopwright/secret-files': '' });
    const setting = (await initializeAgent({ bundlePath: bundle, agentId: 'alex', projectRoot: project, secretFiles: ['ok', '!'] }).catch((e: unknown) => e)) as Error;
    expect(setting).toMatchObject({ name: 'SecretFilesConfigError', field: 'secretFiles[1]' });
    expect(setting.message).toContain('the session setting secretFiles[1]');
  });

  test('validate reports a malformed line and a command reading a project secret', async () => {
    await writeTree(project, { '.loopwright/secret-files': '*.secret\n[x\n' });
    const problems = await validateBundle(bundle, { projectRoot: project });
    expect(problems).toContainEqual(expect.objectContaining({ file: path.join(project, '.loopwright/secret-files'), field: 'line 2' }));

    await writeTree(project, { '.loopwright/secret-files': '*.secret\n', 'data/keys.secret': TOKEN });
    await writeTree(bundle, { 'agents/alex.md': sourceAgent().replace('<c cmd="*exit">', '<c cmd="*keys" data="{project-root}/data/keys.secret">Keys</c>\n    <c cmd="*exit">') });
    const again = await validateBundle(bundle, { projectRoot: project });
    expect(again).toContainEqual(expect.objectContaining({ field: 'commands[*keys].data', message: expect.stringMatching(/Secret file refused.*rule "\*\.secret"/) }));
  });

  test('a file that came with the bundle (the bundle is its own project root) may add patterns but not let secrets through', async () => {
    await writeTree(bundle, { '.loopwright/secret-files': '*.secret\n', 'notes.secret': TOKEN });
    const { context } = await initializeAgent({ bundlePath: bundle, agentId: 'alex' });
    expect(await readFileTool(context, { file_path: '{project-root}/notes.secret' })).toMatchObject({ success: false });

    await writeTree(bundle, { '.loopwright/secret-files': '!.git\n', '.git/config': `[remote "origin"]\nurl = https://${TOKEN}@example.com/x.git\n` });
    const error = (await initializeAgent({ bundlePath: bundle, agentId: 'alex' }).catch((e: unknown) => e)) as Error;
    expect(error).toMatchObject({ name: 'SecretFilesConfigError', line: 1 });
    expect(error.message).toContain('inside the bundle folder');
  });

  test('the model cannot write the file: save_output refuses it, with a context of today and one recorded before', async () => {
    await writeTree(project, { '.loopwright/secret-files': '*.secret\n' });
    const ctx = await contextWith(undefined, { outputRoots: [project] });
    const { protectedPaths: _recorded, secretFiles: _rules, ...older } = ctx;
    for (const context of [ctx, older]) {
      for (const rel of ['.loopwright/secret-files', '.loopwright/secret-files/x', '.LOOPWRIGHT/Secret-Files']) {
        const result = await saveOutputTool(context, { file_path: path.join(project, rel), content: '!*\n' });
        expect(result).toMatchObject({ success: false, error: expect.stringMatching(/bundle's own files|bundle loader/) });
      }
    }
    await expect(fs.readFile(path.join(project, '.loopwright/secret-files'), 'utf8')).resolves.toBe('*.secret\n');
    // The folder stays usable for documents.
    await expect(saveOutputTool(ctx, { file_path: path.join(project, '.loopwright/output/r.md'), content: 'ok' })).resolves.toMatchObject({ success: true });
  });
});
