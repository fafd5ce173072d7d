import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { guardRead, guardWrite, isInside } from '../../../bundle/sandbox/path-guard';
import { SecurityViolationError } from '../../../bundle/errors';
import { resolveVariables, pathVariables } from '../../../bundle/variables';

let tmp: string;
let root: string;
let outside: string;

beforeEach(async () => {
  tmp = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'lw-guard-')));
  root = path.join(tmp, 'project', 'bmad', 'custom', 'bundles', 'bundle-name');
  outside = path.join(tmp, 'outside');
  await fs.mkdir(path.join(root, 'workflows'), { recursive: true });
  await fs.mkdir(outside, { recursive: true });
  await fs.writeFile(path.join(root, 'config.yaml'), 'user_name: Bryan\n');
  await fs.writeFile(path.join(outside, 'secret.txt'), 'secret');
});

afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

async function refusal(promise: Promise<unknown>): Promise<SecurityViolationError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SecurityViolationError);
  const violation = error as SecurityViolationError;
  expect(violation.message).toBe('Security violation: Access denied');
  expect(violation.name).toBe('SecurityViolationError');
  return violation;
}

describe('path-guard', () => {
  test('isInside: separator-aware containment', () => {
    expect(isInside('/a/b/c', '/a/b')).toBe(true);
    expect(isInside('/a/b', '/a/b')).toBe(true);
    expect(isInside('/a/b', '/a/b', true)).toBe(false);
    expect(isInside('/a/bc', '/a/b')).toBe(false);
    expect(isInside('/a', '/a/b')).toBe(false);
    expect(isInside('/a/b/..foo', '/a/b')).toBe(true);
  });

  test('guardRead: a file inside the root returns its real path', async () => {
    expect(await guardRead(path.join(root, 'config.yaml'), [root])).toBe(path.join(root, 'config.yaml'));
    expect(await guardRead(path.join(root, 'workflows', '..', 'config.yaml'), [root])).toBe(path.join(root, 'config.yaml'));
  });

  test('guardRead: a relative path is resolved against the first root', async () => {
    expect(await guardRead('config.yaml', [root, outside])).toBe(path.join(root, 'config.yaml'));
    await refusal(guardRead('../../../../../outside/secret.txt', [root]));
  });

  test('guardRead: the spec example {bundle-root}/../../../etc/passwd is refused without revealing the path', async () => {
    const vars = pathVariables({ bundleRoot: root, coreRoot: root, projectRoot: root });
    const resolved = resolveVariables('{bundle-root}/../../../etc/passwd', vars);
    const error = await refusal(guardRead(resolved, [root]));
    expect(error.message).not.toContain('passwd');
    expect(JSON.stringify(error)).not.toContain('passwd');
  });

  test('guardRead: an absolute path elsewhere is refused, existing or not', async () => {
    await refusal(guardRead(path.join(outside, 'secret.txt'), [root]));
    await refusal(guardRead(path.join(outside, 'missing.txt'), [root]));
    await refusal(guardRead('/etc/passwd', [root]));
  });

  test('guardRead: a sibling folder sharing the root name prefix is outside', async () => {
    await fs.mkdir(root + '-evil');
    await fs.writeFile(path.join(root + '-evil', 'x.txt'), 'x');
    await refusal(guardRead(path.join(root + '-evil', 'x.txt'), [root]));
  });

  test('guardRead: a symlink pointing out of the root is refused', async () => {
    await fs.symlink(path.join(outside, 'secret.txt'), path.join(root, 'link.txt'));
    await fs.symlink(outside, path.join(root, 'linkdir'));
    await refusal(guardRead(path.join(root, 'link.txt'), [root]));
    await refusal(guardRead(path.join(root, 'linkdir', 'secret.txt'), [root]));
    // a dangling link pointing out is refused too, not reported as missing
    await fs.symlink(path.join(outside, 'nothing.txt'), path.join(root, 'dangling.txt'));
    await refusal(guardRead(path.join(root, 'dangling.txt'), [root]));
  });

  test('guardRead: a symlink inside the roots is followed', async () => {
    await fs.symlink(path.join(root, 'config.yaml'), path.join(root, 'alias.yaml'));
    expect(await guardRead(path.join(root, 'alias.yaml'), [root])).toBe(path.join(root, 'config.yaml'));
  });

  test('guardRead: a symlink cycle is refused', async () => {
    await fs.symlink(path.join(root, 'loop-b'), path.join(root, 'loop-a'));
    await fs.symlink(path.join(root, 'loop-a'), path.join(root, 'loop-b'));
    const error = await refusal(guardRead(path.join(root, 'loop-a'), [root]));
    expect(error.reason).toBe('symlink-loop');
    await refusal(guardWrite(path.join(root, 'loop-a'), [root]));
  });

  test('a name longer than the file system allows, in a root or a path, is refused as invalid, not thrown as ENAMETOOLONG', async () => {
    const long = 'x'.repeat(300);
    expect((await refusal(guardRead(path.join(root, long, 'a.md'), [root]))).reason).toBe('invalid-path');
    expect((await refusal(guardRead(path.join(root, 'config.yaml'), [path.join(root, long)]))).reason).toBe('invalid-path');
    expect((await refusal(guardWrite(path.join(root, long), [root]))).reason).toBe('invalid-path');
  });

  test('guardRead: a missing file inside the roots fails with ENOENT, not a violation', async () => {
    const error = await guardRead(path.join(root, 'missing.yaml'), [root]).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(SecurityViolationError);
    expect((error as Error).message).toContain('ENOENT: no such file or directory');
    expect((error as NodeJS.ErrnoException).code).toBe('ENOENT');
  });

  test('guardRead: the second root is allowed too; a NUL byte and no roots are refused', async () => {
    expect(await guardRead(path.join(outside, 'secret.txt'), [root, outside])).toBe(path.join(outside, 'secret.txt'));
    await refusal(guardRead(path.join(root, 'config.yaml\0.txt'), [root]));
    await refusal(guardRead(path.join(root, 'config.yaml'), []));
  });

  test('guardRead: a root given through a symlink still works', async () => {
    const alias = path.join(tmp, 'alias-root');
    await fs.symlink(root, alias);
    expect(await guardRead(path.join(alias, 'config.yaml'), [alias])).toBe(path.join(root, 'config.yaml'));
  });

  test('guardWrite: a new file in a missing folder inside the root is allowed', async () => {
    const out = path.join(root, 'output');
    expect(await guardWrite(path.join(out, 'docs', 'new.md'), [out])).toBe(path.join(out, 'docs', 'new.md'));
    expect(await guardWrite('report.md', [out])).toBe(path.join(out, 'report.md'));
  });

  test('guardWrite: escapes, the root itself and absolute paths elsewhere are refused', async () => {
    const out = path.join(root, 'output');
    await fs.mkdir(out);
    await refusal(guardWrite(path.join(out, '..', 'config.yaml'), [out]));
    await refusal(guardWrite(out, [out]));
    await refusal(guardWrite(path.join(outside, 'x.md'), [out]));
  });

  test('guardWrite: a symlinked target or folder pointing out is refused, dangling or not', async () => {
    const out = path.join(root, 'output');
    await fs.mkdir(out);
    await fs.symlink(path.join(outside, 'secret.txt'), path.join(out, 'existing-link.md'));
    await fs.symlink(path.join(outside, 'new.md'), path.join(out, 'dangling-link.md'));
    await fs.symlink(outside, path.join(out, 'dir-link'));
    await fs.symlink(path.join(outside, 'missing-dir'), path.join(out, 'dangling-dir'));
    await refusal(guardWrite(path.join(out, 'existing-link.md'), [out]));
    await refusal(guardWrite(path.join(out, 'dangling-link.md'), [out]));
    await refusal(guardWrite(path.join(out, 'dir-link', 'new.md'), [out]));
    await refusal(guardWrite(path.join(out, 'dangling-dir', 'deeper', 'new.md'), [out]));
  });

  test('guardWrite: an output root that does not exist yet still bounds the writes', async () => {
    const out = path.join(tmp, 'not-yet', 'out');
    expect(await guardWrite(path.join(out, 'a.md'), [out])).toBe(path.join(out, 'a.md'));
    await refusal(guardWrite(path.join(tmp, 'not-yet', 'b.md'), [out]));
  });
});
