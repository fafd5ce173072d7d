/**
 * Conformance: the native customization and central-config readers (`bundle/skills/customize.ts`,
 * `bundle/skills/bmad-config.ts`) give exactly what BMAD's own Python scripts give, on the real
 * installs of ../shared/corpus/bmad/installed (6.8.0 and 6.11.0; 6.0.4 for the per-module YAML).
 *
 * Each install is copied to a temp folder (the corpus stays read only), team and user overrides of
 * our own are written into its `_bmad/custom/` for a spread of skills (every merge rule appears at
 * least once: scalars, nested tables, `code` and `id` keyed arrays, appended arrays, a type change,
 * mixed identifiers, a user layer over a team one), and then, for EVERY skill with a
 * customize.toml, `_bmad/scripts/resolve_customization.py` is run and its JSON compared with
 * `resolveCustomization`; for the skills we override it runs once more with several `--key`s at
 * once. Those runs share one Python process (`pythonBatch`: the scripts run unchanged, each as
 * `__main__` with its own arguments), so Python starts once per install, not once per run.
 * `resolve_config.py` is compared with `resolveCentralConfig` the same way. Python runs with the
 * machine's `python3`, which must have `tomllib` (3.11+); the suite fails, saying so, without it.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { readModuleVariables, resolveCentralConfig } from '../../bundle/skills/bmad-config';
import { CustomizationError, mergeCustomization, readTomlLayer, resolveCustomization, selectKeys, type CustomizationTable } from '../../bundle/skills/customize';
import { CORPUS, corpusPresent } from '../support/corpus';

const VERSIONS = ['v6.8.0-claude-code', 'v6.11.0-claude-code'];
const YAML_ONLY = 'v6.0.4-claude-code';
const present = corpusPresent(
  'bmad-customization',
  [...VERSIONS, YAML_ONLY].map((v) => `installed/${v}`),
);
const describeCorpus = present ? describe : describe.skip;

/** The `--key`s asked of every skill at once; the script leaves out those a skill lacks. */
const KEYS = ['agent', 'workflow', 'agent.menu', 'agent.principles', 'workflow.persistent_facts', 'workflow.on_complete', 'agent.menu.0', 'nope.deeper'];

/** Team (`<skill>.toml`) and user (`<skill>.user.toml`) overrides, by skill; written only where the skill exists. */
const OVERRIDES: Record<string, { team?: string; user?: string }> = {
  // Scalars, nested tables over two layers, appended arrays, a `code` replaced and one appended, the user over the team.
  'bmad-agent-pm': {
    team: `[agent]
icon = "🧪"
principles = ["Team principle: write it down."]
persistent_facts = ["file:{project-root}/docs/team-facts.md"]
activation_steps_prepend = ["Greet the team channel."]

[agent.team_notes]
tone = "formal"
[agent.team_notes.limits]
max_words = 300

[[agent.menu]]
code = "PRD"
description = "Team PRD flow"
skill = "bmad-prd"

[[agent.menu]]
code = "TM"
description = "Team menu item"
prompt = "Do the team thing."
`,
    user: `[agent]
icon = "🦊"
principles = ["My own principle."]

[agent.team_notes]
tone = "casual"
[agent.team_notes.limits]
max_words = 150
min_words = 10

[[agent.menu]]
code = "TM"
description = "My version of the team item"
`,
  },
  // A menu item without a code: the whole menu falls back to appending.
  'bmad-agent-analyst': {
    team: `[[agent.menu]]
description = "A menu entry with no code"
prompt = "Think out loud."
`,
  },
  // A key that changes type (array to string, then string to array).
  'bmad-agent-architect': {
    team: `[agent]
principles = "One principle, as a string."
communication_style = ["now", "an", "array"]
`,
    user: `[agent]
principles = ["Back to an array."]
`,
  },
  // A user layer alone; a menu item keyed by id among items keyed by code (mixed: append).
  'bmad-agent-dev': {
    user: `[agent]
name = "Ada"

[[agent.menu]]
id = "my-entry"
description = "Keyed by id, not code"
`,
  },
  // Arrays keyed by id: one replaced, one appended; the user replaces the team's new one; plain arrays append.
  'bmad-code-review': {
    team: `[workflow]
on_complete = "Tell the team."
persistent_facts = ["Our review policy lives in docs/review.md."]

[[workflow.review_layers]]
id = "edge-case-hunter"
name = "Edge Case Hunter (team)"
instruction = "Hunt edges the team way."

[[workflow.review_layers]]
id = "security"
name = "Security"
instruction = "Check authz."
`,
    user: `[[workflow.review_layers]]
id = "security"
name = "Security (mine)"
instruction = "Check authz and secrets."
`,
  },
  // Arrays keyed by code in a workflow, a new id-keyed group, and a user scalar.
  'bmad-party-mode': {
    team: `[[workflow.party_members]]
code = "adversary"
name = "Grumbal II"
icon = "😠"
title = "The Other Adversary"
persona = "Even grumpier."

[[workflow.party_members]]
code = "lawyer"
name = "Lex"
icon = "⚖️"
title = "Counsel"
persona = "Reads the licence."

[[workflow.party_groups]]
id = "legal-room"
name = "Legal room"
members = ["lawyer", "adversary"]
`,
    user: `[workflow]
party_mode = "solo"
`,
  },
  'bmad-deep-recon': {
    team: `[workflow]
preferred_sources = ["arxiv.org"]
max_depth = 3

[[workflow.research_types]]
code = "market"
name = "Market Research (team)"
when = "Always."
pack = "types/market.md"
`,
    user: `[workflow]
preferred_sources = ["my-notes.md"]
red_team = "on"
`,
  },
  'bmad-review': {
    team: `[[workflow.lenses]]
code = "adversarial"
name = "Adversarial (team)"
applies_to = "any"
when = "Always."
instruction = "Be harsh."
`,
  },
  // New nested tables under [workflow], deep-merged over two layers; a new top-level table.
  'bmad-prd': {
    team: `[workflow]
doc_standards = ["Team standard."]

[workflow.extra]
owner = "team"
[workflow.extra.deeper]
level = 1
flags = ["a"]

[notes]
why = "a table the defaults do not have"
`,
    user: `[workflow]
activation_steps_prepend = ["Load my notes first."]

[workflow.extra.deeper]
level = 2
flags = ["b"]
`,
  },
  // Keyed items over an empty default array: the two items with one code collapse to the last.
  'bmad-sprint-status': {
    team: `[[workflow.activation_steps_append]]
code = "x"
text = "first"

[[workflow.activation_steps_append]]
code = "x"
text = "second"

[[workflow.activation_steps_append]]
code = "y"
text = "third"
`,
  },
  'bmad-create-story': { user: `[workflow]\non_complete = "Ping me."\n` },
  'bmad-quick-dev': { team: `[workflow]\non_complete = "Run the tests."\npersistent_facts = ["Team fact."]\n` },
  'bmad-brainstorming': { team: `[workflow]\nfavorite_techniques = ["SCAMPER"]\n`, user: `[workflow]\nfavorite_techniques = ["Six hats"]\n` },
};

/** Custom central-config layers: scalars, a new agent, appended arrays, `id`-keyed tools over two layers. */
const CENTRAL_TEAM = `[core]
project_name = "Team Project"
document_output_language = "French"
team_facts = ["Team fact."]

[modules.bmm]
planning_artifacts = "{project-root}/team/planning"

[agents.bmad-agent-pm]
description = "Team PM."

[agents.bmad-agent-custom]
module = "bmm"
name = "Cleo"
title = "Custom agent"

[[core.tools]]
id = "git"
cmd = "git"

[[core.tools]]
id = "make"
cmd = "make"
`;
const CENTRAL_USER = `[core]
user_name = "Robin"
team_facts = ["My fact."]

[modules.bmm]
user_skill_level = "expert"

[[core.tools]]
id = "make"
cmd = "gmake"
`;

/** Fails the suite with a clear message when python3 lacks tomllib (BMAD's scripts need 3.11+). */
function requirePythonWithTomllib(): void {
  try {
    execFileSync('python3', ['-c', 'import tomllib'], { stdio: 'pipe' });
  } catch (error) {
    throw new Error(`This suite runs BMAD's Python scripts and needs python3 with tomllib (Python 3.11+): ${(error as Error).message.split('\n')[0]}`);
  }
}

/** Runs a BMAD script; its JSON output, or its exit status and stderr when it fails. */
function python(root: string, script: string, args: string[]): { json?: CustomizationTable; status: number; stderr: string } {
  try {
    const stdout = execFileSync('python3', [path.join(root, '_bmad/scripts', script), ...args], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', PYTHONIOENCODING: 'utf-8' },
    });
    return { json: JSON.parse(stdout) as CustomizationTable, status: 0, stderr: '' };
  } catch (error) {
    const failed = error as { status?: number; stderr?: string };
    return { status: failed.status ?? -1, stderr: String(failed.stderr ?? '') };
  }
}

/**
 * Runs many BMAD script invocations in one Python process (each `runpy.run_path` executes the
 * unchanged script as `__main__` with its own argv, stdout and stderr), so the suite pays Python's
 * start-up once instead of once per run; results in order, as `python` gives them.
 */
function pythonBatch(root: string, runs: { script: string; args: string[] }[]): { json?: CustomizationTable; status: number; stderr: string }[] {
  const driver = [
    'import io, json, os, runpy, sys, contextlib',
    'runs = json.load(sys.stdin)',
    'out = []',
    'for script, args in runs:',
    '    stdout, stderr, status = io.StringIO(), io.StringIO(), 0',
    '    sys.argv = [script, *args]',
    // As `python3 script.py` has it: the script's folder first on the import path (its helpers live there).
    '    sys.path[0:0] = [os.path.dirname(script)]',
    '    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):',
    '        try:',
    "            runpy.run_path(script, run_name='__main__')",
    '        except SystemExit as e:',
    '            status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)',
    '    del sys.path[0]',
    '    out.append([status, stdout.getvalue(), stderr.getvalue()])',
    'json.dump(out, sys.__stdout__)',
  ].join('\n');
  const input = JSON.stringify(runs.map((run) => [path.join(root, '_bmad/scripts', run.script), run.args]));
  const stdout = execFileSync('python3', ['-c', driver], {
    cwd: root,
    input,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', PYTHONIOENCODING: 'utf-8' },
  });
  return (JSON.parse(stdout) as [number, string, string][]).map(([status, out, stderr]) =>
    status === 0 ? { json: JSON.parse(out) as CustomizationTable, status: 0, stderr: '' } : { status, stderr },
  );
}

/** Copies an install to a temp folder and makes it writable (the corpus files are read only). */
function copyInstall(version: string): string {
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `lw-bmad-custom-${version}-`)));
  fs.cpSync(path.join(CORPUS, 'installed', version), tmp, { recursive: true });
  const entries = fs.readdirSync(tmp, { recursive: true, withFileTypes: true });
  for (const entry of [{ name: '', parentPath: tmp, isDirectory: () => true }, ...entries]) {
    const p = path.join(entry.parentPath, entry.name);
    fs.chmodSync(p, entry.isDirectory() ? 0o755 : 0o644);
  }
  return tmp;
}

function skillsWithCustomization(version: string): string[] {
  const dir = path.join(CORPUS, 'installed', version, '.claude/skills');
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((skill) => fs.existsSync(path.join(dir, skill, 'customize.toml')))
    .sort();
}

/** What `moduleVariables` must give, from the script's output: core's scalars, then the module's. */
function flatScalars(...tables: unknown[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const table of tables) {
    if (typeof table !== 'object' || table === null) continue;
    for (const [key, value] of Object.entries(table)) {
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') out[key] = String(value);
    }
  }
  return out;
}

beforeAll(() => {
  if (present) requirePythonWithTomllib();
});

describe.each(VERSIONS)('%s', (version) => {
  const skills = present ? skillsWithCustomization(version) : [];
  let root = '';
  /** The script's answers computed in `beforeAll`, by their arguments. */
  const scripted = new Map<string, ReturnType<typeof python>>();
  const scriptFor = (args: string[]): ReturnType<typeof python> => scripted.get(args.join('\0')) ?? python(root, 'resolve_customization.py', args);

  beforeAll(() => {
    if (!present) return;
    root = copyInstall(version);
    const custom = path.join(root, '_bmad/custom');
    for (const [skill, layers] of Object.entries(OVERRIDES)) {
      if (!skills.includes(skill)) continue;
      if (layers.team !== undefined) fs.writeFileSync(path.join(custom, `${skill}.toml`), layers.team);
      if (layers.user !== undefined) fs.writeFileSync(path.join(custom, `${skill}.user.toml`), layers.user);
    }
    fs.writeFileSync(path.join(custom, 'config.toml'), CENTRAL_TEAM);
    fs.writeFileSync(path.join(custom, 'config.user.toml'), CENTRAL_USER);
    // Every skill's script output, whole and (where overridden) by --key, in one Python process.
    const runs = skills.flatMap((skill) => {
      const skillRoot = path.join(root, '.claude/skills', skill);
      return [
        { script: 'resolve_customization.py', args: ['--skill', skillRoot] },
        ...(OVERRIDES[skill] !== undefined ? [{ script: 'resolve_customization.py', args: ['--skill', skillRoot, ...KEYS.flatMap((key) => ['--key', key])] }] : []),
      ];
    });
    const results = pythonBatch(root, runs);
    runs.forEach((run, i) => scripted.set(run.args.join('\0'), results[i]!));
  });

  afterAll(() => {
    if (root !== '') fs.rmSync(root, { recursive: true, force: true });
  });

  describeCorpus('resolve_customization.py', () => {
    test('the install has skills with customize.toml and the overrides cover a good part of them', () => {
      expect(skills.length).toBeGreaterThan(30);
      expect(Object.keys(OVERRIDES).filter((skill) => skills.includes(skill)).length).toBeGreaterThanOrEqual(9);
    });

    test.each(skills)('resolveCustomization: %s gives what the script gives (and by --key when overridden)', async (skill) => {
      const skillRoot = path.join(root, '.claude/skills', skill);
      const whole = scriptFor(['--skill', skillRoot]);
      expect(whole).toMatchObject({ status: 0 });
      const resolved = await resolveCustomization({ skillRoot, projectRoot: root });
      expect(resolved.values).toEqual(whole.json);
      // Key order too, as the script prints it (the model sees the table in this order).
      expect(JSON.stringify(resolved.values)).toBe(JSON.stringify(whole.json));
      const layers = OVERRIDES[skill] ?? {};
      expect(resolved.files).toEqual([
        path.join(skillRoot, 'customize.toml'),
        ...(layers.team !== undefined ? [path.join(root, '_bmad/custom', `${skill}.toml`)] : []),
        ...(layers.user !== undefined ? [path.join(root, '_bmad/custom', `${skill}.user.toml`)] : []),
      ]);

      // The script is slow to start (about 0.1 s), so `--key` is asked only where overrides make it interesting.
      if (OVERRIDES[skill] === undefined) return;
      const byKey = scriptFor(['--skill', skillRoot, ...KEYS.flatMap((key) => ['--key', key])]);
      expect(byKey).toMatchObject({ status: 0 });
      expect(selectKeys(resolved.values, KEYS)).toEqual(byKey.json);
      for (const key of ['agent', 'workflow']) {
        const one = await resolveCustomization({ skillRoot, projectRoot: root, key });
        expect(one.values).toEqual(byKey.json?.[key]);
      }
    });

    test('resolveCustomization: without projectRoot it finds the project as the script does', async () => {
      const skillRoot = path.join(root, '.claude/skills/bmad-agent-pm');
      const whole = python(root, 'resolve_customization.py', ['--skill', skillRoot]);
      const resolved = await resolveCustomization({ skillRoot });
      expect(resolved.projectRoot).toBe(root);
      expect(resolved.values).toEqual(whole.json);
    });

    test('resolveCustomization: an override that does not parse names the file and the line the script names', async () => {
      const skillRoot = path.join(root, '.claude/skills/bmad-agent-pm');
      const bad = path.join(root, '_bmad/custom/bmad-agent-pm.user.toml');
      const good = fs.readFileSync(bad, 'utf8');
      fs.writeFileSync(bad, '[agent]\nicon = "ok"\nname = \n');
      try {
        const script = python(root, 'resolve_customization.py', ['--skill', skillRoot]);
        const error = await resolveCustomization({ skillRoot, projectRoot: root }).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(CustomizationError);
        expect(error).toMatchObject({ file: bad, line: 3 });
        if (version === 'v6.8.0-claude-code') {
          // 6.8 warns and skips a bad override; 6.11 stops, as this reader does.
          expect(script.status).toBe(0);
          const defaults = (await readTomlLayer(path.join(skillRoot, 'customize.toml'))) ?? {};
          const team = (await readTomlLayer(path.join(root, '_bmad/custom/bmad-agent-pm.toml'))) ?? {};
          expect(script.json).toEqual(mergeCustomization(defaults, team));
        } else {
          expect(script.status).toBe(1);
          expect(script.stderr).toContain(`failed to parse ${bad}`);
          expect(script.stderr).toContain('at line 3');
        }
      } finally {
        fs.writeFileSync(bad, good);
      }
    });

    test('resolveCustomization: a keyed identifier that is not a string is refused, as 6.11 refuses it', async () => {
      const skillRoot = path.join(root, '.claude/skills/bmad-agent-ux-designer');
      const team = path.join(root, '_bmad/custom/bmad-agent-ux-designer.toml');
      fs.writeFileSync(team, '[[agent.menu]]\ncode = 7\ndescription = "numeric code"\n');
      try {
        const script = python(root, 'resolve_customization.py', ['--skill', skillRoot]);
        const error = await resolveCustomization({ skillRoot, projectRoot: root }).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(CustomizationError);
        expect(error).toMatchObject({ file: team, field: 'agent.menu' });
        if (version === 'v6.8.0-claude-code') {
          // 6.8's inline merge took any identifier; 6.11's config_utils refuses it.
          expect(script.status).toBe(0);
        } else {
          expect(script.status).toBe(1);
          expect(script.stderr).toContain('keyed array identifier `code` must be a string');
        }
      } finally {
        fs.rmSync(team);
      }
    });
  });

  describeCorpus('resolve_config.py', () => {
    let central: CustomizationTable = {};

    test('resolveCentralConfig: gives what the script gives, whole and by --key', async () => {
      const whole = python(root, 'resolve_config.py', ['--project-root', root]);
      central = whole.json ?? {};
      expect(whole).toMatchObject({ status: 0 });
      const values = await resolveCentralConfig(root);
      expect(values).toEqual(whole.json);
      expect(JSON.stringify(values)).toBe(JSON.stringify(whole.json));
      // The custom layers did apply (a check that the comparison is not of two empty merges).
      expect(values).toMatchObject({ core: { user_name: 'Robin', tools: [{ id: 'git' }, { id: 'make', cmd: 'gmake' }] } });

      const keys = ['core', 'modules.bmm', 'agents.bmad-agent-custom', 'core.tools', 'nope'];
      const byKey = python(root, 'resolve_config.py', ['--project-root', root, ...keys.flatMap((key) => ['--key', key])]);
      expect(byKey).toMatchObject({ status: 0 });
      expect(await resolveCentralConfig(root, { keys })).toEqual(byKey.json);
    });

    test("moduleVariables: core then modules.bmm scalars of the script's output, from the four layers", async () => {
      const config = central;
      expect(Object.keys(config)).toContain('modules');
      const modules = config.modules as Record<string, unknown>;
      const read = await readModuleVariables(root, 'bmm');
      expect(read.variables).toEqual(flatScalars(config.core, modules.bmm));
      expect(read.variables).toMatchObject({ user_name: 'Robin', planning_artifacts: '{project-root}/team/planning' });
      expect(read.files).toEqual(['config.toml', 'config.user.toml', 'custom/config.toml', 'custom/config.user.toml'].map((f) => path.join(root, '_bmad', f)));
      expect(read.source).toBe('central');
    });
  });
});

describeCorpus(`${YAML_ONLY} (no config.toml)`, () => {
  test("moduleVariables: core/config.yaml then the module's config.yaml, values as written", async () => {
    const root = path.join(CORPUS, 'installed', YAML_ONLY);
    const read = await readModuleVariables(root, 'bmm');
    const core = path.join(root, '_bmad/core/config.yaml');
    const bmm = path.join(root, '_bmad/bmm/config.yaml');
    expect(read.source).toBe('module-yaml');
    expect(read.files).toEqual([core, bmm]);
    expect(read.variables).toEqual(flatScalars(parseYaml(fs.readFileSync(core, 'utf8')), parseYaml(fs.readFileSync(bmm, 'utf8'))));
    expect(read.variables.planning_artifacts).toContain('{project-root}');
  });
});
