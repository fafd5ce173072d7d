import { DEFAULT_SECRET_FILES, parseSecretFileRules, parseSecretFileSetting, secretMatch, secretOptionsOf } from '../../../bundle/sandbox/secret-files';
import { initializeAgentForInspection } from '../../../bundle/initialize-agent';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { makeBundle, makeTempDir, writeTree } from './fixtures';

describe('secret-files: the default list', () => {
  test.each([
    ['.env', 'an environment file'],
    ['sub/.env.local', 'an environment file'],
    ['.ENVRC', 'an environment file'],
    ['keys/id_ed25519_sk', 'a private key'],
    ['.ssh/id_rsa.pub', 'inside a folder of keys or version-control internals'],
    ['.git', 'inside a folder of keys or version-control internals'],
    ['vendor/lib/.git/hooks/pre-commit', 'inside a folder of keys or version-control internals'],
    ['Server.PEM', 'a key, certificate or keystore file'],
    ['home/.aws/sso/cache/x.json', "a cloud command-line tool's credentials or settings"],
    ['.nuget/NuGet.Config', "a package manager's credentials file"],
    ['.kube/cache/discovery/x.json', 'a Kubernetes or Docker configuration with credentials'],
    ['infra/prod.tfstate.backup', "an infrastructure tool's credentials or state"],
  ])('%s is %s', (rel, what) => {
    expect(secretMatch(rel)?.what).toBe(what);
  });

  test.each(['keyboard.md', 'docs/credentials-guide.md', 'id_rsa.pub', 'README.md', '.gitignore', '.github/x.yml', 'environment.md', 'docs/env.md', 'settings.xml', 'credentials.md'])(
    '%s is not a secret',
    (rel) => {
      expect(secretMatch(rel)).toBeUndefined();
    },
  );

  test('every default pattern is a valid line of the override syntax', () => {
    const lines = DEFAULT_SECRET_FILES.flatMap((group) => group.patterns);
    expect(parseSecretFileSetting(lines).map((r) => r.pattern)).toEqual(lines);
  });

  test('answers stay the same when the list is compiled afresh (its answers are not kept forever)', () => {
    for (let i = 0; i < 10_050; i++) secretMatch(`docs/file-${i}.md`);
    expect(secretMatch('.npmrc')?.pattern).toBe('.npmrc');
    expect(secretMatch('docs/file-1.md')).toBeUndefined();
  });

  test('the root itself and paths leaving it are never matched', () => {
    expect(secretMatch('')).toBeUndefined();
    expect(secretMatch('.')).toBeUndefined();
    expect(secretMatch('../.env')).toBeUndefined();
  });
});

describe('secret-files: a project or session changes the list', () => {
  const where = { file: '/p/.loopwright/secret-files' };

  test('blank lines and comments are skipped; lines keep their number; trailing white space is dropped', () => {
    expect(parseSecretFileRules('# mine\n\n*.secret   \n\\#hash\n!\\!bang\r\n', where)).toEqual([
      { pattern: '*.secret', source: '/p/.loopwright/secret-files:3' },
      { pattern: '\\#hash', source: '/p/.loopwright/secret-files:4' },
      { pattern: '!\\!bang', source: '/p/.loopwright/secret-files:5' },
    ]);
  });

  test('later lines win, and a folder made secret cannot be let through inside', () => {
    const rules = parseSecretFileRules('!.npmrc\nlocal/\n!local/ok.md\n', where);
    expect(secretMatch('.npmrc', rules)).toBeUndefined();
    expect(secretMatch('sub/.npmrc', rules)).toBeUndefined();
    expect(secretMatch('local/ok.md', rules)).toMatchObject({ pattern: 'local/', source: '/p/.loopwright/secret-files:2', what: 'listed as secret by the project' });
    const setting = parseSecretFileSetting(['.npmrc']);
    expect(secretMatch('.npmrc', [...rules, ...setting])).toMatchObject({ source: 'the session setting secretFiles[0]', what: 'listed as secret by the session setting' });
  });

  test.each([
    ['!', 'names no pattern'],
    ['/', 'names no file'],
    ['../x', '".." segment'],
    ['a/./b', '".." segment'],
    ['[abc', 'unclosed "["'],
    ['x\\', 'trailing backslash'],
    [' x', 'leading white space'],
    ['a\u0001b', 'control character'],
  ])('%j is refused with a typed error naming the file and line', (line, problem) => {
    const error = (() => {
      try {
        parseSecretFileRules(`ok\n${line}\n`, where);
      } catch (e) {
        return e;
      }
    })() as Error & { line: number; file: string; field: string };
    expect(error).toMatchObject({ name: 'SecretFilesConfigError', line: 2, file: where.file, field: 'line 2' });
    expect(error.message).toContain(`${where.file}, line 2`);
    expect(error.message).toContain(problem);
  });

  test('a setting entry holding several lines is refused', () => {
    expect(() => parseSecretFileSetting(['a\nb'])).toThrow(/secretFiles\[0\].*one pattern per entry/);
  });

  test('secretOptionsOf: a context recorded before the rules existed gets the defaults', () => {
    expect(secretOptionsOf({})).toEqual({ allowSecretFiles: false });
    expect(secretOptionsOf({ allowSecretFiles: true, secretFiles: [{ pattern: 'x', source: 's' }] })).toEqual({
      allowSecretFiles: true,
      secretFiles: [{ pattern: 'x', source: 's' }],
    });
  });

  test('inspect shows an agent whose project has a malformed rule, and says a session would stop', async () => {
    const tmp = await makeTempDir();
    try {
      const project = path.join(tmp, 'project');
      await writeTree(project, { '.loopwright/secret-files': '[x\n' });
      const bundle = await makeBundle(path.join(tmp, 'b'));
      const inspected = await initializeAgentForInspection({ bundlePath: bundle, agentId: 'alex', projectRoot: project });
      expect(inspected.wouldStop).toBe(true);
      expect(inspected.warnings[0]).toMatch(/^Secret files: Invalid secret-file rule in .*secret-files, line 1: .*a session stops here$/);
    } finally {
      await fs.rm(tmp, { recursive: true, force: true });
    }
  });
});
