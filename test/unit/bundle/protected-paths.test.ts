import * as path from 'node:path';
import { bmadRootOf, covers, layoutProtectedPaths, minimalPaths, protectedPathsOf, startFolders } from '../../../bundle/sandbox/protected-paths';
import type { RuntimeContext } from '../../../common/runtime-context';

const rel = (root: string, paths: string[]) => paths.map((p) => path.relative(root, p)).sort();

describe('protected-paths: the rule decided from the roots', () => {
  test('a stand-alone bundle that is its own project root: its own entries, bmad/, the secret-file rules', () => {
    const roots = { bundleRoot: '/w/b', coreRoot: '/w/b', projectRoot: '/w/b' };
    expect(startFolders(roots)).toEqual(['/w/b']);
    expect(rel('/w/b', layoutProtectedPaths(roots))).toEqual(
      [
        '.*/skills',
        '.loopwright/secret-files',
        '_bmad',
        '_cfg',
        'agents',
        'bmad',
        'bundle.yaml',
        'bundle.yml',
        'checklists',
        'config.yaml',
        'config.yml',
        'core/agents',
        'data',
        'modules/*/agents',
        'tasks',
        'teams',
        'templates',
        'workflows',
      ].sort(),
    );
  });

  test("an installed project of today: _bmad/ whole, and every tool's skills folder", () => {
    const roots = { bundleRoot: '/p/_bmad', coreRoot: '/p/_bmad/core', projectRoot: '/p' };
    const paths = layoutProtectedPaths(roots);
    expect(bmadRootOf(roots)).toBe('/p/_bmad');
    for (const target of ['/p/_bmad/bmm/config.yaml', '/p/.claude/skills/bmad-prd/SKILL.md', '/p/.agents/skills/x/customize.toml', '/p/.cline/skills/y/SKILL.md']) {
      expect(paths.some((entry) => covers(entry, target))).toBe(true);
    }
    for (const target of ['/p/_bmad-output/planning-artifacts/prd.md', '/p/docs/skills/notes.md', '/p/.claude/settings.json']) {
      expect(paths.some((entry) => covers(entry, target))).toBe(false);
    }
  });

  test('a bundle inside the project: every folder between is a start folder', () => {
    const roots = { bundleRoot: '/p/tools/b', coreRoot: '/p/tools/b', projectRoot: '/p' };
    expect(startFolders(roots)).toEqual(['/p/tools/b', '/p/tools', '/p']);
    const paths = layoutProtectedPaths(roots);
    for (const p of ['/p/bmad', '/p/agents', '/p/config.yaml', '/p/tools/bundle.yaml', '/p/tools/bmad', '/p/.loopwright/secret-files']) expect(paths).toContain(p);
    expect(paths).not.toContain('/p/workflows');
  });

  test('a bundle inside an installed tree: the whole bmad/ (its tree), whatever the core', () => {
    expect(bmadRootOf({ bundleRoot: '/p/bmad/custom/x', coreRoot: '/p/bmad/core', projectRoot: '/p' })).toBe('/p/bmad');
    expect(bmadRootOf({ bundleRoot: '/p/bmad/custom/x', coreRoot: '/p/bmad/custom/x', projectRoot: '/p' })).toBe('/p/bmad');
    expect(bmadRootOf({ bundleRoot: '/p/bmad', coreRoot: '/p/bmad/core', projectRoot: '/p' })).toBe('/p/bmad');
    expect(bmadRootOf({ bundleRoot: '/home/u/bmad/x', coreRoot: '/home/u/bmad/x', projectRoot: '/home/u/bmad/x' })).toBeUndefined();
    expect(layoutProtectedPaths({ bundleRoot: '/p/bmad/custom/x', coreRoot: '/p/bmad/core', projectRoot: '/p' })).toContain('/p/bmad');
  });

  test('a start folder named bmad: its modules and tree markers; a folder named bmad above: its tree markers', () => {
    const paths = layoutProtectedPaths({ bundleRoot: '/w/bmad/b', coreRoot: '/w/bmad/b', projectRoot: '/w/bmad' });
    for (const p of ['/w/bmad/*/agents', '/w/bmad/*/config.yaml', '/w/bmad/_cfg', '/w/bmad/core']) expect(paths).toContain(p);
    expect(layoutProtectedPaths({ bundleRoot: '/x/bmad/y/b', coreRoot: '/x/bmad/y/b', projectRoot: '/x/bmad/y/b' })).toEqual(expect.arrayContaining(['/x/bmad/_cfg', '/x/bmad/core']));
  });

  test('covers: a * segment is any one name, case is ignored, separators count', () => {
    expect(covers('/w/bmad/*/agents', '/w/bmad/docs/agents/x.md')).toBe(true);
    expect(covers('/w/bmad/*/agents', '/w/bmad/docs/x.md')).toBe(false);
    expect(covers('/w/b/agents', '/W/B/Agents/x.md')).toBe(true);
    expect(covers('/w/b/agents', '/w/b/agents-overview.md')).toBe(false);
    expect(covers('/w/b/config.yaml', '/w/b/docs/config.yaml')).toBe(false);
  });

  test('minimalPaths: drops repeats (in any case) and what another entry covers, never both of a pair', () => {
    expect(minimalPaths(['/a/b', '/a/B', '/a/b/c', '/a/*/c', '/a/x/c', '/q'])).toEqual(['/a/b', '/a/*/c', '/q']);
  });

  test('protectedPathsOf: a context recorded before gets the rule, plus what it recorded and its config', () => {
    const ctx: RuntimeContext = {
      bundleRoot: '/w/b',
      coreRoot: '/w/b',
      projectRoot: '/w/b',
      configPath: '/w/shared/config.yaml',
      variables: {},
      readRoots: ['/w/b'],
      writeRoots: ['/w/b'],
      protectedPaths: ['/w/b/agents/alex.md', '/w/extra/memory.md'],
      maxReadBytes: 1,
    };
    const paths = protectedPathsOf(ctx);
    expect(paths).toEqual(expect.arrayContaining(['/w/b/bmad', '/w/b/agents', '/w/extra/memory.md', '/w/shared/config.yaml']));
    expect(paths).not.toContain('/w/b/agents/alex.md');
  });
});
