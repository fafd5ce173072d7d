/**
 * Agent Skills support, on temporary folders: reading SKILL.md leniently (parseSkillFile),
 * discovery (where it looks, precedence and collisions, grouping folders, the symlink rule, the
 * bounds), the catalog the model sees, and the strict validator.
 */
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { estimateTextTokens } from '../../../common/token-estimate';
import { catalogTokens, skillCatalog, xmlText } from '../../../bundle/skills/catalog';
import { discoverSkills, findSkill, MAX_SKILL_SCAN_FOLDERS } from '../../../bundle/skills/discover';
import { MAX_SKILL_FILE_BYTES, parseSkillFile, repairColonValues, skillBody, type SkillRecord } from '../../../bundle/skills/skill-file';
import { skillReferences, validateSkill } from '../../../bundle/skills/validate-skill';
import { makeTempDir as makeFixtureDir, writeTree } from './fixtures';

// Every temp folder a test makes is removed at the end (one of them holds 2,000 folders).
const made: string[] = [];
async function makeTempDir(prefix?: string): Promise<string> {
  const dir = await makeFixtureDir(prefix);
  made.push(dir);
  return dir;
}
afterAll(async () => {
  await Promise.all(made.map((dir) => fs.rm(dir, { recursive: true, force: true })));
});

/** A SKILL.md with the given front-matter lines and body. */
function skillMd(fields: string, body = '# Instructions\n\nDo the thing.\n'): string {
  return `---\n${fields.trim()}\n---\n${body}`;
}

/** A valid SKILL.md for a skill named `name`. */
function simple(name: string, description = `Does ${name} things. Use when the user asks for ${name}.`): string {
  return skillMd(`name: ${name}\ndescription: ${description}`);
}

const FILE = '/p/.claude/skills/pdf-tools/SKILL.md';

const names = (skills: readonly SkillRecord[]) => skills.map((s) => s.name);

// ---------------------------------------------------------------------------------------------
// parseSkillFile

test('parseSkillFile: reads the fields of a well-formed SKILL.md and where its body starts', () => {
  const text = skillMd(
    [
      'name: pdf-tools',
      'description: Extract text from PDFs. Use when handling PDFs.',
      'license: Apache-2.0',
      'compatibility: Requires poppler',
      'metadata:',
      '  author: example-org',
      '  version: "1.0"',
      'allowed-tools: Bash(git:*)  Read',
    ].join('\n'),
    '\n# PDF tools\n\nStep one.\n\n',
  );
  const { skill, diagnostics } = parseSkillFile(text, FILE);
  expect(diagnostics).toEqual([]);
  expect(skill).toEqual({
    name: 'pdf-tools',
    description: 'Extract text from PDFs. Use when handling PDFs.',
    file: FILE,
    dir: '/p/.claude/skills/pdf-tools',
    license: 'Apache-2.0',
    compatibility: 'Requires poppler',
    metadata: { author: 'example-org', version: '1.0' },
    allowedTools: ['Bash(git:*)', 'Read'],
    disableModelInvocation: false,
    bodyOffset: text.indexOf('\n# PDF tools'),
  });
  expect(skillBody(text)).toBe('# PDF tools\n\nStep one.');
  expect(text.slice(skill!.bodyOffset).trim()).toBe(skillBody(text));
});

test('parseSkillFile: CRLF line ends and a byte-order mark are read like LF', () => {
  const text = '\uFEFF---\r\nname: pdf-tools\r\ndescription: Reads PDFs.\r\n---\r\nBody line\r\n';
  const { skill, diagnostics } = parseSkillFile(text, FILE);
  expect(diagnostics).toEqual([]);
  expect(skill?.description).toBe('Reads PDFs.');
  expect(skillBody(text)).toBe('Body line');
});

test('parseSkillFile: a name that differs from the folder, is too long or has bad characters is a warning, and the skill still loads', () => {
  const long = `a${'-b'.repeat(40)}`;
  for (const [name, warnings] of [
    ['other-name', 1],
    ['PDF_Tools', 2],
    [long, 2],
  ] as const) {
    const { skill, diagnostics } = parseSkillFile(simple(name), FILE);
    expect(skill?.name).toBe(name);
    expect(diagnostics).toHaveLength(warnings);
    expect(diagnostics.every((d) => d.level === 'warning' && d.field === 'name' && d.file === FILE)).toBe(true);
  }
  const { skill, diagnostics } = parseSkillFile(skillMd('description: No name here.'), FILE);
  expect(skill?.name).toBe('pdf-tools');
  expect(diagnostics).toEqual([{ level: 'warning', file: FILE, field: 'name', message: 'no name; the folder name "pdf-tools" is used' }]);
});

test('parseSkillFile: a missing or empty description skips the skill with an error', () => {
  for (const fields of ['name: pdf-tools', 'name: pdf-tools\ndescription: ""', 'name: pdf-tools\ndescription:', 'name: pdf-tools\ndescription: [a, b]']) {
    const { skill, diagnostics } = parseSkillFile(skillMd(fields), FILE);
    expect(skill).toBeUndefined();
    expect(diagnostics).toEqual([expect.objectContaining({ level: 'error', file: FILE, field: 'description' })]);
    expect(diagnostics[0]!.message).toMatch(/^skipped: /);
  }
});

test('parseSkillFile: an unquoted value containing ": " is recovered by quoting it, with a warning', () => {
  const text = skillMd('name: pdf-tools\ndescription: Use this skill when: the user asks about PDFs\n  or forms: any kind\nlicense: MIT');
  const { skill, diagnostics } = parseSkillFile(text, FILE);
  expect(skill?.description).toBe('Use this skill when: the user asks about PDFs or forms: any kind');
  expect(skill?.license).toBe('MIT');
  expect(diagnostics).toEqual([expect.objectContaining({ level: 'warning', file: FILE, message: expect.stringMatching(/not valid YAML/) })]);
  expect(repairColonValues('a: b: c\nd: "e: f"\ng: |\n  h: i')).toBe('a: "b: c"\nd: "e: f"\ng: |\n  h: i');
});

test('parseSkillFile: front matter that stays unreadable, or is missing, skips the skill with an error', () => {
  const broken = parseSkillFile(skillMd('name: pdf-tools\ndescription: [unclosed'), FILE);
  expect(broken.skill).toBeUndefined();
  expect(broken.diagnostics).toEqual([expect.objectContaining({ level: 'error', message: expect.stringMatching(/front matter cannot be read/) })]);
  for (const text of ['# No front matter\n', '---\nname: x\ndescription: y\n', '---\n---\nbody', '---\n- a\n- b\n---\n']) {
    const { skill, diagnostics } = parseSkillFile(text, FILE);
    expect(skill).toBeUndefined();
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]!.level).toBe('error');
  }
});

test('parseSkillFile: disable-model-invocation, a list of allowed tools and non-text metadata', () => {
  const text = skillMd('name: pdf-tools\ndescription: d\ndisable-model-invocation: true\nallowed-tools: [Read, Grep]\nmetadata:\n  version: 2\n  nested: {a: b}');
  const { skill, diagnostics } = parseSkillFile(text, FILE);
  expect(skill?.disableModelInvocation).toBe(true);
  expect(skill?.allowedTools).toEqual(['Read', 'Grep']);
  expect(skill?.metadata).toEqual({ version: '2' });
  expect(diagnostics.map((d) => d.field)).toEqual(['metadata.nested', 'allowed-tools']);
});

// ---------------------------------------------------------------------------------------------
// discoverSkills

test('discoverSkills: project skills in .agents, .claude and other .<tool>/skills folders, sorted by name', async () => {
  const project = await makeTempDir('lw-skills-');
  await writeTree(project, {
    '.claude/skills/zeta/SKILL.md': simple('zeta'),
    '.claude/skills/alpha/SKILL.md': simple('alpha'),
    '.claude/skills/alpha/references/guide.md': 'guide',
    '.claude/skills/README.md': 'not a skill',
    '.claude/skills/no-skill/notes.md': 'no SKILL.md here',
    '.claude/skills/lower/skill.md': simple('lower'),
    '.agents/skills/beta/SKILL.md': simple('beta'),
    '.gemini/skills/gamma/SKILL.md': simple('gamma'),
    '.vscode/settings.json': '{}',
    'skills/not-a-dot-folder/SKILL.md': simple('not-a-dot-folder'),
  });
  const { skills, diagnostics, shadowed } = await discoverSkills({ projectRoot: project });
  expect(names(skills)).toEqual(['alpha', 'beta', 'gamma', 'zeta']);
  expect(diagnostics).toEqual([]);
  expect(shadowed).toEqual([]);
  const alpha = findSkill(skills, 'alpha')!;
  expect(alpha).toMatchObject({
    scope: 'project',
    folder: path.join(project, '.claude/skills'),
    dir: path.join(project, '.claude/skills/alpha'),
    file: path.join(project, '.claude/skills/alpha/SKILL.md'),
  });
  expect(findSkill(skills, 'gamma')?.folder).toBe(path.join(project, '.gemini/skills'));
  expect(findSkill(skills, 'missing')).toBeUndefined();
});

test('discoverSkills: collisions follow the precedence (.agents, .claude, other tools alphabetically; project, extra, user) and each is a warning', async () => {
  const project = await makeTempDir('lw-skills-');
  const extra = await makeTempDir('lw-skills-extra-');
  const home = await makeTempDir('lw-skills-home-');
  await writeTree(project, {
    '.claude/skills/a/SKILL.md': simple('a', 'claude a'),
    '.agents/skills/a/SKILL.md': simple('a', 'agents a'),
    '.cursor/skills/b/SKILL.md': simple('b', 'cursor b'),
    '.cline/skills/b/SKILL.md': simple('b', 'cline b'),
    '.github/skills/c/SKILL.md': simple('c', 'github c'),
  });
  await writeTree(extra, { 'c/SKILL.md': simple('c', 'extra c'), 'd/SKILL.md': simple('d', 'extra d') });
  await writeTree(home, {
    '.agents/skills/d/SKILL.md': simple('d', 'user d'),
    '.claude/skills/e/SKILL.md': simple('e', 'user e'),
    '.claude/skills/a/SKILL.md': simple('a', 'user a'),
  });
  const { skills, diagnostics, shadowed } = await discoverSkills({ projectRoot: project, extraFolders: [extra], userHome: home, userSkills: true });
  expect(skills.map((s) => [s.name, s.description, s.scope])).toEqual([
    ['a', 'agents a', 'project'],
    ['b', 'cline b', 'project'],
    ['c', 'github c', 'project'],
    ['d', 'extra d', 'extra'],
    ['e', 'user e', 'user'],
  ]);
  expect(shadowed).toEqual([
    { name: 'a', file: path.join(project, '.claude/skills/a/SKILL.md'), by: path.join(project, '.agents/skills/a/SKILL.md') },
    { name: 'b', file: path.join(project, '.cursor/skills/b/SKILL.md'), by: path.join(project, '.cline/skills/b/SKILL.md') },
    { name: 'c', file: path.join(extra, 'c/SKILL.md'), by: path.join(project, '.github/skills/c/SKILL.md') },
    { name: 'd', file: path.join(home, '.agents/skills/d/SKILL.md'), by: path.join(extra, 'd/SKILL.md') },
    { name: 'a', file: path.join(home, '.claude/skills/a/SKILL.md'), by: path.join(project, '.agents/skills/a/SKILL.md') },
  ]);
  expect(diagnostics.map((d) => [d.level, d.file])).toEqual(shadowed.map((s) => ['warning', s.file]));
  expect(diagnostics[0]!.message).toMatch(/shadowed by .*\.agents\/skills\/a\/SKILL\.md \(project scope\)/);
});

test('discoverSkills: user skills only when asked, and a home that is the project is not counted twice', async () => {
  const project = await makeTempDir('lw-skills-');
  const home = await makeTempDir('lw-skills-home-');
  await writeTree(project, { '.claude/skills/p/SKILL.md': simple('p') });
  await writeTree(home, { '.claude/skills/u/SKILL.md': simple('u') });
  expect(names((await discoverSkills({ projectRoot: project, userHome: home })).skills)).toEqual(['p']);
  expect(names((await discoverSkills({ projectRoot: project, userHome: home, userSkills: false })).skills)).toEqual(['p']);
  const withUser = await discoverSkills({ projectRoot: project, userHome: home, userSkills: true });
  expect(withUser.skills.map((s) => [s.name, s.scope])).toEqual([
    ['p', 'project'],
    ['u', 'user'],
  ]);
  const same = await discoverSkills({ projectRoot: project, userHome: project, userSkills: true });
  expect(same.skills.map((s) => [s.name, s.scope])).toEqual([['p', 'project']]);
  expect(same.diagnostics).toEqual([]);
});

test('discoverSkills: a grouping folder one level down is looked into, no deeper', async () => {
  const project = await makeTempDir('lw-skills-');
  await writeTree(project, {
    '.claude/skills/bmad/one/SKILL.md': simple('one'),
    '.claude/skills/bmad/two/SKILL.md': simple('two'),
    '.claude/skills/bmad/deeper/three/SKILL.md': simple('three'),
    '.claude/skills/top/SKILL.md': simple('top'),
    // A skill's own sub-folders are not skills.
    '.claude/skills/top/nested/SKILL.md': simple('nested'),
  });
  const { skills, diagnostics } = await discoverSkills({ projectRoot: project });
  expect(names(skills)).toEqual(['one', 'top', 'two']);
  expect(findSkill(skills, 'one')).toMatchObject({ folder: path.join(project, '.claude/skills'), dir: path.join(project, '.claude/skills/bmad/one') });
  expect(diagnostics).toEqual([]);
});

test('discoverSkills: a skill folder or SKILL.md symlinked outside the project is refused with a warning; links inside it are followed', async () => {
  const project = await makeTempDir('lw-skills-');
  const outside = await makeTempDir('lw-skills-outside-');
  await writeTree(outside, { 'evil/SKILL.md': simple('evil'), 'evil.md': simple('sneaky') });
  await writeTree(project, {
    '.claude/skills/inside/SKILL.md': simple('inside'),
    'shared/linked/SKILL.md': simple('linked'),
    'docs/own.md': simple('own-file'),
  });
  await fs.symlink(path.join(outside, 'evil'), path.join(project, '.claude/skills/evil'));
  await fs.mkdir(path.join(project, '.claude/skills/sneaky'));
  await fs.symlink(path.join(outside, 'evil.md'), path.join(project, '.claude/skills/sneaky/SKILL.md'));
  await fs.symlink(path.join(project, 'shared/linked'), path.join(project, '.claude/skills/linked'));
  await fs.mkdir(path.join(project, '.claude/skills/own-file'));
  await fs.symlink(path.join(project, 'docs/own.md'), path.join(project, '.claude/skills/own-file/SKILL.md'));
  // A whole tool folder linked out of the project is refused too.
  await writeTree(outside, { 'tool/skills/far/SKILL.md': simple('far') });
  await fs.symlink(path.join(outside, 'tool'), path.join(project, '.cursor'));

  const { skills, diagnostics } = await discoverSkills({ projectRoot: project });
  expect(names(skills)).toEqual(['inside', 'linked', 'own-file']);
  expect(findSkill(skills, 'linked')?.dir).toBe(path.join(project, '.claude/skills/linked'));
  expect(diagnostics.map((d) => [d.level, path.relative(project, d.file)])).toEqual([
    ['warning', '.cursor/skills'],
    ['warning', '.claude/skills/evil'],
    ['warning', '.claude/skills/sneaky/SKILL.md'],
  ]);
  expect(diagnostics.every((d) => /symlink leading outside/.test(d.message))).toBe(true);
});

test('discoverSkills: an extra folder is its own scope for symlinks, unless extraScopeRoot names a wider one', async () => {
  const project = await makeTempDir('lw-skills-');
  await writeTree(project, { '.claude/skills/plain/SKILL.md': simple('plain'), 'shared/linked/SKILL.md': simple('linked') });
  await fs.symlink(path.join(project, 'shared/linked'), path.join(project, '.claude/skills/linked'));
  const elsewhere = await makeTempDir('lw-skills-elsewhere-');
  const folder = path.join(project, '.claude/skills');

  const own = await discoverSkills({ projectRoot: elsewhere, extraFolders: [folder] });
  expect(own.skills.map((s) => [s.name, s.scope])).toEqual([['plain', 'extra']]);
  expect(own.diagnostics.map((d) => [d.level, d.file])).toEqual([['warning', path.join(folder, 'linked')]]);

  const wider = await discoverSkills({ projectRoot: elsewhere, extraFolders: [folder], extraScopeRoot: project });
  expect(wider.skills.map((s) => [s.name, s.dir])).toEqual([
    ['linked', path.join(folder, 'linked')],
    ['plain', path.join(folder, 'plain')],
  ]);
  expect(wider.diagnostics).toEqual([]);
  const outside = await discoverSkills({ projectRoot: elsewhere, extraFolders: [folder], extraScopeRoot: path.join(project, 'shared') });
  expect(outside.skills).toEqual([]);
  expect(outside.diagnostics.map((d) => d.message)).toEqual([expect.stringMatching(/outside .* \(extraScopeRoot\); skipped/)]);
});

test('discoverSkills: .agents/skills linked to .claude/skills, or a skill linked twice, is one skill and no collision', async () => {
  const project = await makeTempDir('lw-skills-');
  await writeTree(project, { '.claude/skills/a/SKILL.md': simple('a'), '.gemini/skills/.keep': '' });
  await fs.mkdir(path.join(project, '.agents'));
  await fs.symlink(path.join(project, '.claude/skills'), path.join(project, '.agents/skills'));
  await fs.symlink(path.join(project, '.claude/skills/a'), path.join(project, '.gemini/skills/a'));
  const { skills, diagnostics, shadowed } = await discoverSkills({ projectRoot: project });
  expect(names(skills)).toEqual(['a']);
  expect(skills[0]!.folder).toBe(path.join(project, '.agents/skills'));
  expect(diagnostics).toEqual([]);
  expect(shadowed).toEqual([]);
});

test('discoverSkills: a missing description skips the skill, a colon in a description is recovered, and bad files are diagnostics, never a crash', async () => {
  const project = await makeTempDir('lw-skills-');
  await writeTree(project, {
    '.claude/skills/no-desc/SKILL.md': skillMd('name: no-desc'),
    '.claude/skills/colon/SKILL.md': skillMd('name: colon\ndescription: Use when: the user says so'),
    '.claude/skills/broken/SKILL.md': skillMd('name: broken\ndescription: [oops'),
    '.claude/skills/huge/SKILL.md': simple('huge', 'x'.repeat(MAX_SKILL_FILE_BYTES)),
    '.claude/skills/ok/SKILL.md': simple('ok'),
  });
  await fs.mkdir(path.join(project, '.claude/skills/binary'));
  await fs.writeFile(path.join(project, '.claude/skills/binary/SKILL.md'), Buffer.from([0x2d, 0x2d, 0x2d, 0x0a, 0x00, 0x01]));
  await fs.mkdir(path.join(project, '.claude/skills/fifo'));
  execFileSync('mkfifo', [path.join(project, '.claude/skills/fifo/SKILL.md')]);

  const { skills, diagnostics } = await discoverSkills({ projectRoot: project });
  expect(names(skills)).toEqual(['colon', 'ok']);
  expect(findSkill(skills, 'colon')?.description).toBe('Use when: the user says so');
  const byFolder = Object.fromEntries(diagnostics.map((d) => [path.basename(path.dirname(d.file)), d.level]));
  expect(byFolder).toEqual({ binary: 'error', broken: 'error', colon: 'warning', fifo: 'error', huge: 'error', 'no-desc': 'error' });
  expect(diagnostics.find((d) => d.file.includes('/huge/'))?.message).toMatch(/too large/i);
});

test('discoverSkills: a missing project folder is an error diagnostic and extra folders still count', async () => {
  const extra = await makeTempDir('lw-skills-extra-');
  await writeTree(extra, { 'x/SKILL.md': simple('x') });
  const missing = path.join(extra, 'no-such-project');
  const { skills, diagnostics } = await discoverSkills({ projectRoot: missing, extraFolders: [extra, path.join(extra, 'nope')] });
  expect(names(skills)).toEqual(['x']);
  expect(skills[0]!.scope).toBe('extra');
  expect(diagnostics.map((d) => [d.level, d.file])).toEqual([
    ['error', missing],
    ['warning', path.join(extra, 'nope')],
  ]);
});

test('discoverSkills: skips .git and node_modules, and stops after MAX_SKILL_SCAN_FOLDERS folders with a warning', async () => {
  const project = await makeTempDir('lw-skills-');
  await writeTree(project, {
    '.claude/skills/node_modules/pkg/SKILL.md': simple('pkg'),
    '.claude/skills/.git/hooks/SKILL.md': simple('hooks'),
    '.claude/skills/real/SKILL.md': simple('real'),
  });
  expect(names((await discoverSkills({ projectRoot: project })).skills)).toEqual(['real']);

  // Empty folders before the skill in name order: each one is listed, so the budget runs out first.
  const many = path.join(project, '.agents/skills');
  await Promise.all(Array.from({ length: MAX_SKILL_SCAN_FOLDERS + 10 }, (_, i) => fs.mkdir(path.join(many, `empty-${String(i).padStart(5, '0')}`), { recursive: true })));
  const started = performance.now();
  const { skills, diagnostics } = await discoverSkills({ projectRoot: project });
  expect(performance.now() - started).toBeLessThan(30_000);
  expect(names(skills)).toEqual([]);
  expect(diagnostics).toEqual([expect.objectContaining({ level: 'warning', message: expect.stringMatching(/MAX_SKILL_SCAN_FOLDERS/) })]);
});

// ---------------------------------------------------------------------------------------------
// skillCatalog

function record(name: string, description: string, extra: Partial<SkillRecord> = {}): SkillRecord {
  return { name, description, file: `/s/${name}/SKILL.md`, dir: `/s/${name}`, disableModelInvocation: false, bodyOffset: 0, ...extra };
}

test('skillCatalog: the instruction names the tool, skills are listed by name, XML-escaped, one per line', () => {
  const text = skillCatalog([record('zed', 'Last <one> & "only"'), record('abc', 'First,\n  folded   over lines.')], { toolName: 'load_skill' });
  expect(text).toBe(
    [
      'SKILLS:',
      "The following skills provide specialized instructions for specific tasks. When a task matches a skill's description, call load_skill with the skill's name to load its full instructions; relative paths in a skill resolve from its directory.",
      '<available_skills>',
      '<skill><name>abc</name><description>First, folded over lines.</description></skill>',
      '<skill><name>zed</name><description>Last &lt;one&gt; &amp; "only"</description></skill>',
      '</available_skills>',
    ].join('\n'),
  );
  expect(xmlText('a\u0000b\u0007c')).toBe('abc');
});

test('skillCatalog: disable-model-invocation hides a skill, and no visible skill means no section', async () => {
  const project = await makeTempDir('lw-skills-');
  await writeTree(project, {
    '.claude/skills/shown/SKILL.md': simple('shown'),
    '.claude/skills/hidden/SKILL.md': skillMd('name: hidden\ndescription: Only by hand.\ndisable-model-invocation: true'),
  });
  const { skills } = await discoverSkills({ projectRoot: project });
  expect(names(skills)).toEqual(['hidden', 'shown']);
  const text = skillCatalog(skills, { toolName: 'activate_skill' });
  expect(text).toContain('<name>shown</name>');
  expect(text).not.toContain('hidden');
  expect(
    skillCatalog(
      skills.filter((s) => s.name === 'hidden'),
      { toolName: 'activate_skill' },
    ),
  ).toBe('');
  expect(skillCatalog([], { toolName: 'activate_skill' })).toBe('');
  expect(catalogTokens([])).toBe(0);
});

test('skillCatalog: the same skills give the same text in any order, and catalogTokens estimates it', () => {
  const skills = Array.from({ length: 20 }, (_, i) => record(`skill-${String(i).padStart(2, '0')}`, `Description number ${i}.`));
  const text = skillCatalog(skills, { toolName: 'activate_skill' });
  expect(skillCatalog([...skills].reverse(), { toolName: 'activate_skill' })).toBe(text);
  expect(catalogTokens(skills)).toBe(estimateTextTokens(text));
  expect(catalogTokens(skills, { toolName: 'activate_skill' })).toBe(estimateTextTokens(text));
});

// ---------------------------------------------------------------------------------------------
// validateSkill

async function skillFolder(name: string, files: Record<string, string>): Promise<string> {
  const root = await makeTempDir('lw-skills-validate-');
  await writeTree(path.join(root, name), files);
  return path.join(root, name);
}

test('validateSkill: a skill following the specification has no diagnostics', async () => {
  const dir = await skillFolder('pdf-tools', {
    'SKILL.md': skillMd(
      'name: pdf-tools\ndescription: Extract PDF text.\nlicense: MIT\ncompatibility: Needs poppler\nmetadata:\n  version: "1.0"\nallowed-tools: Read',
      'See [the guide](references/GUIDE.md) and run scripts/extract.py.\n',
    ),
    'references/GUIDE.md': 'guide',
    'scripts/extract.py': 'print()',
  });
  expect(await validateSkill(dir)).toEqual([]);
});

test('validateSkill: every rule on name, description, compatibility and metadata names its field', async () => {
  const cases: [string, string, string[]][] = [
    ['Bad-Name', 'name: Bad-Name\ndescription: d', ['name']],
    ['-lead', 'name: -lead\ndescription: d', ['name']],
    ['a--b', 'name: a--b\ndescription: d', ['name']],
    ['x'.repeat(65), `name: ${'x'.repeat(65)}\ndescription: d`, ['name']],
    ['folder', 'name: other\ndescription: d', ['name']],
    ['folder', 'description: d', ['name']],
    ['folder', 'name: folder', ['description']],
    ['folder', `name: folder\ndescription: ${'d'.repeat(1025)}`, ['description']],
    ['folder', `name: folder\ndescription: d\ncompatibility: ${'c'.repeat(501)}`, ['compatibility']],
    ['folder', 'name: folder\ndescription: d\nmetadata:\n  version: 1.0\n  ok: "yes"', ['metadata.version']],
    ['folder', 'name: folder\ndescription: d\nmetadata: [a]', ['metadata']],
  ];
  for (const [folder, fields, expected] of cases) {
    const dir = await skillFolder(folder, { 'SKILL.md': skillMd(fields) });
    const diagnostics = await validateSkill(dir);
    expect([folder, diagnostics.map((d) => d.field)]).toEqual([folder, expected]);
    expect(diagnostics.every((d) => d.level === 'error' && d.file === path.join(dir, 'SKILL.md'))).toBe(true);
  }
  // Lenient discovery reads the colon; the specification does not.
  const colon = await validateSkill(await skillFolder('folder', { 'SKILL.md': skillMd('name: folder\ndescription: Use when: asked') }));
  expect(colon).toEqual([expect.objectContaining({ level: 'error', line: 3, message: expect.stringMatching(/not valid YAML/) })]);
  expect(await validateSkill(path.join(await makeTempDir(), 'none'))).toEqual([expect.objectContaining({ level: 'error', message: 'the skill folder has no SKILL.md' })]);
});

test('validateSkill: a body over 500 lines and fields outside the specification are warnings', async () => {
  const body = Array.from({ length: 501 }, (_, i) => `line ${i}`).join('\n');
  const diagnostics = await validateSkill(await skillFolder('long', { 'SKILL.md': skillMd('name: long\ndescription: d\nargument-hint: x', body) }));
  expect(diagnostics.map((d) => [d.level, d.field])).toEqual([
    ['warning', 'argument-hint'],
    ['warning', 'body'],
  ]);
  expect(diagnostics[1]!.message).toMatch(/501 lines/);
});

test('validateSkill: referenced files that are missing, with their lines; URLs, anchors, variables, wildcards, absolute paths and examples in code are not files', async () => {
  const body = [
    '# Skill', // body line 1 is line 5 of the file, after four lines of front matter
    'Read [the guide](references/guide.md), [missing](references/missing.md "title") and [spaced](<assets/my file.md>).',
    'Run `scripts/run.py` then scripts/absent.sh. Also ./references/dot-missing.md.',
    'Links: [site](https://example.com/x), [anchor](#section), [var]({skill-root}/x.md), [abs](/etc/hosts), [mail](mailto:a@b.c).',
    'Frames: `references/mode-*.md`, `{skill-root}/scripts/x.py`, `_bmad/scripts/y.py`, `[code](not-a-link.md)`.',
    '```markdown',
    '- [example](./example.md)',
    '```',
    '[folder](assets/) and [page](other.md#part)',
  ].join('\n');
  const dir = await skillFolder('refs', {
    'SKILL.md': skillMd('name: refs\ndescription: d', body),
    'references/guide.md': 'g',
    'assets/my file.md': 'a',
    'scripts/run.py': 'r',
  });
  expect(skillReferences(body).map((r) => [r.target, r.line])).toEqual([
    ['references/guide.md', 2],
    ['references/missing.md', 2],
    ['assets/my file.md', 2],
    ['scripts/run.py', 3],
    ['scripts/absent.sh', 3],
    ['references/dot-missing.md', 3],
    ['assets/', 9],
    ['other.md', 9],
  ]);
  const diagnostics = await validateSkill(dir);
  expect(diagnostics.map((d) => [d.level, d.field, d.line, d.message])).toEqual([
    ['warning', 'body', 6, "references references/missing.md, which does not exist in the skill's folder"],
    ['warning', 'body', 7, "references scripts/absent.sh, which does not exist in the skill's folder"],
    ['warning', 'body', 7, "references references/dot-missing.md, which does not exist in the skill's folder"],
    ['warning', 'body', 13, "references other.md, which does not exist in the skill's folder"],
  ]);
});

test('skillReferences: a bare path the text gives as an example is not a reference; the examples run to their parenthesis or the end of their sentence or clause, and a link is always one', () => {
  const body = [
    '- Bare paths (e.g. `references/guide.md`) resolve from the skill root.',
    'Name a file, for example references/a.md, assets/x.png or scripts/b.py. Then read references/c.md.',
    'Helpers such as `scripts/d.py`; the main one is scripts/e.py.',
    '(e.g. assets/f.png). See references/g.md, i.e. references/h.md.',
    'E.g., [the real guide](references/i.md) and eg. assets/j.txt, For instance: scripts/k.sh',
    'Seeing references/l.md (the page, e.g. a reference)',
  ].join('\n');
  expect(skillReferences(body).map((r) => [r.target, r.line])).toEqual([
    ['references/c.md', 2],
    ['scripts/e.py', 3],
    ['references/g.md', 4],
    ['references/h.md', 4],
    ['references/i.md', 5],
    ['references/l.md', 6],
  ]);
});
