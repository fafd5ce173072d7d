/**
 * BMAD's customization merge (`bundle/skills/customize.ts`) rule by rule, and the layer readers
 * (customization and central config) on small projects in a temp folder. The same rules are checked
 * against BMAD's own Python scripts on the real installs in
 * `test/conformance/bmad-customization.test.ts`.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LimitExceededError } from '../../../bundle/errors';
import { moduleVariables, readModuleVariables, resolveCentralConfig } from '../../../bundle/skills/bmad-config';
import { CustomizationError, MAX_TOML_BYTES, mergeCustomization, parseTomlLayer, resolveCustomization, selectKeys, type CustomizationTable } from '../../../bundle/skills/customize';

let tmp: string;

beforeEach(async () => {
  tmp = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'lw-customize-')));
});

afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

/** Writes `files` (path relative to the temp folder -> text) and returns the temp folder. */
async function project(files: Record<string, string>): Promise<string> {
  for (const [rel, text] of Object.entries(files)) {
    const file = path.join(tmp, rel);
    await fs.mkdir(path.dirname(file), { recursive: true });
    await fs.writeFile(file, text);
  }
  return tmp;
}

/** The error `promise` rejects with (fails when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

const SKILL = '.claude/skills/bmad-agent-x';

describe('customize', () => {
  test('mergeCustomization: scalars take the override; keys on one side only are kept', () => {
    expect(mergeCustomization({ name: 'John', icon: 'a', n: 1 }, { icon: 'b', n: 2.5, flag: true })).toEqual({
      name: 'John',
      icon: 'b',
      n: 2.5,
      flag: true,
    });
  });

  test('mergeCustomization: nested tables merge key by key at every depth', () => {
    const base = { agent: { name: 'John', style: { tone: 'dry', pace: 'fast' } } };
    const override = { agent: { style: { tone: 'warm', extra: { deep: 1 } } } };
    expect(mergeCustomization(base, override)).toEqual({
      agent: { name: 'John', style: { tone: 'warm', pace: 'fast', extra: { deep: 1 } } },
    });
  });

  test('mergeCustomization: arrays of tables keyed by `code` replace a known item whole and append a new one', () => {
    const base: CustomizationTable = {
      menu: [
        { code: 'PRD', description: 'Create a PRD', skill: 'bmad-prd' },
        { code: 'CE', description: 'Epics' },
      ],
    };
    const override = {
      menu: [
        { code: 'PRD', description: 'Our PRD' },
        { code: 'ZZ', description: 'New' },
      ],
    };
    // The replaced item loses `skill`: items are replaced, not merged.
    expect(mergeCustomization(base, override)).toEqual({
      menu: [
        { code: 'PRD', description: 'Our PRD' },
        { code: 'CE', description: 'Epics' },
        { code: 'ZZ', description: 'New' },
      ],
    });
  });

  test('mergeCustomization: arrays of tables keyed by `id` merge by `id`', () => {
    const base = {
      layers: [
        { id: 'blind', name: 'Blind' },
        { id: 'edge', name: 'Edge' },
      ],
    };
    const override = {
      layers: [
        { id: 'edge', name: 'Edge 2' },
        { id: 'new', name: 'New' },
      ],
    };
    expect(mergeCustomization(base, override)).toEqual({
      layers: [
        { id: 'blind', name: 'Blind' },
        { id: 'edge', name: 'Edge 2' },
        { id: 'new', name: 'New' },
      ],
    });
  });

  test('mergeCustomization: `code` is the key when every item has both `code` and `id`', () => {
    const base = { a: [{ code: 'x', id: '1', v: 0 }] };
    expect(mergeCustomization(base, { a: [{ code: 'x', id: '2', v: 1 }] })).toEqual({ a: [{ code: 'x', id: '2', v: 1 }] });
  });

  test('mergeCustomization: a repeated identifier keeps both base items and replaces the last one', () => {
    const base = {
      a: [
        { code: 'x', v: 1 },
        { code: 'x', v: 2 },
      ],
    };
    expect(mergeCustomization(base, { a: [{ code: 'x', v: 3 }] })).toEqual({
      a: [
        { code: 'x', v: 1 },
        { code: 'x', v: 3 },
      ],
    });
  });

  test('mergeCustomization: plain arrays append, base first', () => {
    const base = { principles: ['one', 'two'], persistent_facts: ['file:a.md'], activation_steps_prepend: [] };
    const override = { principles: ['three'], persistent_facts: ['file:b.md'], activation_steps_prepend: ['first'] };
    expect(mergeCustomization(base, override)).toEqual({
      principles: ['one', 'two', 'three'],
      persistent_facts: ['file:a.md', 'file:b.md'],
      activation_steps_prepend: ['first'],
    });
  });

  test('mergeCustomization: arrays with an item lacking the identifier, or mixing `code` and `id`, append', () => {
    const menu = [{ code: 'A', v: 1 }];
    expect(mergeCustomization({ menu }, { menu: [{ code: 'A', v: 2 }, { v: 3 }] })).toEqual({
      menu: [{ code: 'A', v: 1 }, { code: 'A', v: 2 }, { v: 3 }],
    });
    expect(mergeCustomization({ menu }, { menu: [{ id: 'A', v: 2 }] })).toEqual({
      menu: [
        { code: 'A', v: 1 },
        { id: 'A', v: 2 },
      ],
    });
    expect(mergeCustomization({ menu }, { menu: ['text'] })).toEqual({ menu: [{ code: 'A', v: 1 }, 'text'] });
  });

  test('mergeCustomization: a key whose type changes takes the override as it is', () => {
    const base: CustomizationTable = { a: ['x'], b: { c: 1 }, d: 'text', e: { f: 1 } };
    const override: CustomizationTable = { a: 'now a string', b: ['now', 'an', 'array'], d: { g: 2 }, e: 5 };
    expect(mergeCustomization(base, override)).toEqual(override);
  });

  test('mergeCustomization: a non-string or empty identifier is a CustomizationError naming the array', () => {
    const numeric = (() => {
      try {
        mergeCustomization({ agent: { menu: [{ code: 'A' }] } }, { agent: { menu: [{ code: 1 }] } });
      } catch (error) {
        return error;
      }
    })();
    expect(numeric).toBeInstanceOf(CustomizationError);
    expect(numeric).toMatchObject({ field: 'agent.menu', message: expect.stringContaining('`code` of agent.menu must be a string, got a number') });
    expect(() => mergeCustomization({ a: [{ id: 'x' }] }, { a: [{ id: '' }] })).toThrow(/must not be empty/);
  });

  test('mergeCustomization: leaves its inputs unchanged and keeps `__proto__` keys as data', () => {
    const base = parseTomlLayer('[agent]\nname = "a"\nlist = [1]\n', '/b.toml');
    const override = parseTomlLayer('[agent]\nlist = [2]\n[__proto__]\npolluted = true\n', '/o.toml');
    const before = JSON.stringify([base, override]);
    const merged = mergeCustomization(base, override);
    expect(JSON.stringify([base, override])).toBe(before);
    expect(merged.agent).toEqual({ name: 'a', list: [1, 2] });
    expect(Object.hasOwn(merged, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test("selectKeys: the script's --key output, dotted paths as flat names, missing ones left out", () => {
    const values = { agent: { name: 'J', menu: [{ code: 'A' }] }, workflow: {} };
    expect(selectKeys(values, ['agent.name', 'agent.menu.0', 'nope', 'workflow', 'agent.name'])).toEqual({ 'agent.name': 'J', workflow: {} });
    expect(selectKeys(values, [])).toBe(values);
  });

  test('resolveCustomization: merges defaults, team and user layers in that order and lists them', async () => {
    const root = await project({
      '_bmad/config.toml': '',
      [`${SKILL}/customize.toml`]: '[agent]\nname = "John"\nicon = "a"\nprinciples = ["p1"]\n',
      '_bmad/custom/bmad-agent-x.toml': '[agent]\nicon = "team"\nprinciples = ["p2"]\n',
      '_bmad/custom/bmad-agent-x.user.toml': '[agent]\nicon = "user"\n',
    });
    const resolved = await resolveCustomization({ skillRoot: path.join(root, SKILL), projectRoot: root });
    expect(resolved.values).toEqual({ agent: { name: 'John', icon: 'user', principles: ['p1', 'p2'] } });
    expect(resolved.files).toEqual([path.join(root, SKILL, 'customize.toml'), path.join(root, '_bmad/custom/bmad-agent-x.toml'), path.join(root, '_bmad/custom/bmad-agent-x.user.toml')]);
  });

  test('resolveCustomization: missing override layers are skipped, a missing customize.toml is an error', async () => {
    const root = await project({ [`${SKILL}/customize.toml`]: 'a = 1\n', '_bmad/custom/bmad-agent-x.user.toml': 'b = 2\n' });
    const resolved = await resolveCustomization({ skillRoot: path.join(root, SKILL), projectRoot: root });
    expect(resolved.values).toEqual({ a: 1, b: 2 });
    expect(resolved.files).toEqual([path.join(root, SKILL, 'customize.toml'), path.join(root, '_bmad/custom/bmad-agent-x.user.toml')]);
    const missing = await rejection(resolveCustomization({ skillRoot: path.join(root, 'nowhere'), projectRoot: root }));
    expect(missing).toBeInstanceOf(CustomizationError);
    expect(missing.message).toContain(path.join(root, 'nowhere', 'customize.toml'));
  });

  test('resolveCustomization: a layer that does not parse is a CustomizationError naming the file and line', async () => {
    const root = await project({
      [`${SKILL}/customize.toml`]: 'a = 1\n',
      '_bmad/custom/bmad-agent-x.toml': '[agent]\nname = "ok"\nicon = \n',
    });
    const error = await rejection(resolveCustomization({ skillRoot: path.join(root, SKILL), projectRoot: root }));
    const team = path.join(root, '_bmad/custom/bmad-agent-x.toml');
    expect(error).toBeInstanceOf(CustomizationError);
    expect(error).toMatchObject({ file: team, line: 3 });
    expect(error.message).toContain(`Invalid TOML in ${team}:`);
    expect(error.message).toContain('at line 3');
  });

  test("resolveCustomization: key picks out a value as the script's --key walks it (tables only)", async () => {
    const root = await project({ [`${SKILL}/customize.toml`]: '[agent]\nname = "J"\n[[agent.menu]]\ncode = "A"\n' });
    const skillRoot = path.join(root, SKILL);
    expect((await resolveCustomization({ skillRoot, projectRoot: root, key: 'agent' })).values).toEqual({ name: 'J', menu: [{ code: 'A' }] });
    expect((await resolveCustomization({ skillRoot, projectRoot: root, key: 'agent.menu' })).values).toEqual([{ code: 'A' }]);
    expect((await resolveCustomization({ skillRoot, projectRoot: root, key: 'agent.menu.0' })).values).toBeUndefined();
    expect((await resolveCustomization({ skillRoot, projectRoot: root, key: 'workflow' })).values).toBeUndefined();
  });

  test('resolveCustomization: without projectRoot the nearest folder with _bmad above the skill is used; skillName names the overrides', async () => {
    const root = await project({
      '_bmad/custom/other-name.toml': 'b = 2\n',
      '_bmad/custom/bmad-agent-x.toml': 'c = 3\n',
      [`${SKILL}/customize.toml`]: 'a = 1\n',
    });
    const found = await resolveCustomization({ skillRoot: path.join(root, SKILL) });
    expect(found).toMatchObject({ projectRoot: root, values: { a: 1, c: 3 } });
    expect((await resolveCustomization({ skillRoot: path.join(root, SKILL), projectRoot: root, skillName: 'other-name' })).values).toEqual({ a: 1, b: 2 });
    const escape = await rejection(resolveCustomization({ skillRoot: path.join(root, SKILL), projectRoot: root, skillName: '../../x' }));
    expect(escape).toMatchObject({ name: 'CustomizationError', field: 'skillName' });
  });

  test("resolveCustomization: TOML 1.1 syntax that BMAD's Python reader refuses is refused, with its line", async () => {
    const cases: [string, string, number][] = [
      ['a = { x = 1,\n  y = 2 }\n', 'a line break inside an inline table', 1],
      ['ok = 1\na = { x = 1, }\n', 'a trailing comma in an inline table', 2],
      ['a = "\\e[0m"\n', 'the escape \\e', 1],
      ['a = "\\x41"\n', 'the escape \\x', 1],
      ['a = 07:32\n', 'a time without seconds', 1],
      ['a = 1979-05-27T07:32Z\n', 'a time without seconds', 1],
    ];
    for (const [text, what, line] of cases) {
      let error: unknown;
      try {
        parseTomlLayer(text, '/x.toml');
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(CustomizationError);
      expect(error).toMatchObject({ line, message: expect.stringContaining(what) });
    }
    // TOML 1.0 constructs that look alike are accepted.
    const ok = [
      'a = { b = [1,\n  2], c = """x\ny""" }',
      'a = [1, 2,]',
      'a = "# not a comment { x = 1, }"',
      "a = '\\e is literal'",
      'a = """two quotes at the end"""""',
      'a = 1979-05-27T07:32:00Z\nb = 07:32:00\nc = 1979-05-27 07:32:00-07:00',
      '"quoted key" = { "x,y" = 1 } # comment',
    ];
    for (const text of ok) expect(() => parseTomlLayer(text, '/x.toml')).not.toThrow();
  });

  test('resolveCustomization: a byte-order mark, too large a file or too deep a nesting are refused', async () => {
    const root = await project({ [`${SKILL}/customize.toml`]: '\ufeffa = 1\n' });
    const skillRoot = path.join(root, SKILL);
    expect(await rejection(resolveCustomization({ skillRoot, projectRoot: root }))).toMatchObject({
      name: 'CustomizationError',
      line: 1,
      message: expect.stringContaining('byte-order mark'),
    });
    await fs.writeFile(path.join(skillRoot, 'customize.toml'), `a = "${'x'.repeat(MAX_TOML_BYTES)}"\n`);
    const large = await rejection(resolveCustomization({ skillRoot, projectRoot: root }));
    expect(large).toBeInstanceOf(LimitExceededError);
    expect(large).toMatchObject({ limit: 'MAX_TOML_BYTES' });
    await fs.writeFile(path.join(skillRoot, 'customize.toml'), `${Array.from({ length: 100 }, () => 'a').join('.')} = 1\n`);
    expect(await rejection(resolveCustomization({ skillRoot, projectRoot: root }))).toMatchObject({ limit: 'MAX_TOML_DEPTH' });
  });
});

describe('bmad-config', () => {
  test('resolveCentralConfig: merges the four layers in order; a missing config.toml is an error', async () => {
    const root = await project({
      '_bmad/config.toml': '[core]\nuser_name = "A"\nproject_name = "p"\n[modules.bmm]\nplanning = "{project-root}/x"\n',
      '_bmad/config.user.toml': '[core]\nuser_name = "B"\n',
      '_bmad/custom/config.toml': '[core]\nuser_name = "C"\nfacts = ["t"]\n',
      '_bmad/custom/config.user.toml': '[core]\nfacts = ["u"]\n',
    });
    expect(await resolveCentralConfig(root)).toEqual({
      core: { user_name: 'C', project_name: 'p', facts: ['t', 'u'] },
      modules: { bmm: { planning: '{project-root}/x' } },
    });
    expect(await resolveCentralConfig(root, { keys: ['core.user_name', 'agents'] })).toEqual({ 'core.user_name': 'C' });
    await fs.rm(path.join(root, '_bmad/config.toml'));
    expect(await rejection(resolveCentralConfig(root))).toBeInstanceOf(CustomizationError);
  });

  test("moduleVariables: core values then the module's from the central config, scalars only, as written", async () => {
    const root = await project({
      '_bmad/config.toml': '[core]\nuser_name = "A"\nout = "{project-root}/o"\nlist = ["x"]\n[modules.bmm]\nout = "bmm-out"\nlevel = 2\nauto = true\n',
      '_bmad/custom/config.user.toml': '[core]\nuser_name = "Me"\n',
      '_bmad/bmm/config.yaml': 'ignored: true\n',
    });
    const read = await readModuleVariables(root, 'bmm');
    expect(read.variables).toEqual({ user_name: 'Me', out: 'bmm-out', level: '2', auto: 'true' });
    expect(read).toMatchObject({ source: 'central', files: [path.join(root, '_bmad/config.toml'), path.join(root, '_bmad/custom/config.user.toml')] });
    expect(await moduleVariables(root, 'core')).toEqual({ user_name: 'Me', out: '{project-root}/o' });
  });

  test('moduleVariables: without config.toml, core then module config.yaml, then their config.user.yaml', async () => {
    const root = await project({
      '_bmad/core/config.yaml': 'user_name: A\nlang: English\n',
      '_bmad/bmm/config.yaml': 'user_name: A\nplanning: "{project-root}/p"\nnothing: null\n',
      '_bmad/core/config.user.yaml': 'user_name: Me\n',
    });
    const read = await readModuleVariables(root, 'bmm');
    expect(read.variables).toEqual({ user_name: 'Me', lang: 'English', planning: '{project-root}/p' });
    expect(read).toMatchObject({
      source: 'module-yaml',
      files: [path.join(root, '_bmad/core/config.yaml'), path.join(root, '_bmad/bmm/config.yaml'), path.join(root, '_bmad/core/config.user.yaml')],
    });
    expect(await rejection(moduleVariables(root, '../etc'))).toBeInstanceOf(CustomizationError);
  });
});
