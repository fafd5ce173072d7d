/**
 * A small BMAD-shaped project of our own, written to a temp folder, for tests and recordings that
 * must not depend on the corpus: `_bmad/` with a central `config.toml` (and a user override), a
 * module config, and two skills in `.claude/skills/`: `lw-agent-guide`, an agent skill whose
 * `customize.toml` has an `[agent]` table and a menu, and `lw-notes`, a skill with a reference, an
 * asset and a `[workflow]` customization.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Writes the project; returns its real path and a cleanup. */
export function writeSkillsProject(prefix = 'lw-skills-'): { root: string; cleanup(): void } {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  const write = (rel: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  };
  write('_bmad/config.toml', ['[core]', 'project_name = "harbour"', 'output_folder = "out"', '', '[modules.guides]', 'planning_artifacts = "{project-root}/out/plans"', ''].join('\n'));
  write('_bmad/config.user.toml', ['[core]', 'user_name = "Ada"', 'communication_language = "English"', ''].join('\n'));
  write('_bmad/guides/config.yaml', 'planning_artifacts: "{project-root}/out/plans"\nuser_name: Ada\n');
  write('_bmad/core/config.yaml', 'user_name: Ada\n');
  write(
    '.claude/skills/lw-agent-guide/SKILL.md',
    [
      '---',
      'name: lw-agent-guide',
      'description: A harbour guide who plans boat trips. Use when the user asks for Gus or a trip plan.',
      '---',
      '# Gus',
      '',
      'Greet the user with {agent.icon} and show the menu. Skill files live in {skill-root}.',
      '',
    ].join('\n'),
  );
  write(
    '.claude/skills/lw-agent-guide/customize.toml',
    [
      '[agent]',
      'name = "Gus"',
      'title = "Harbour Guide"',
      'icon = "⚓"',
      'role = "Plans boat trips around the harbour."',
      'identity = "Thirty years on the water."',
      'communication_style = "Short and salty."',
      'principles = ["Safety first.", "Check the tide."]',
      'persistent_facts = ["The harbour closes at dusk.", "file:{project-root}/docs/*.md"]',
      '',
      '[[agent.menu]]',
      'code = "TP"',
      'description = "Plan a trip"',
      'skill = "lw-notes"',
      '',
      '[[agent.menu]]',
      'code = "WX"',
      'description = "Tell the weather"',
      'prompt = "Say the weather is fair."',
      '',
    ].join('\n'),
  );
  write('docs/harbour.md', 'The harbour has three piers.\n');
  write(
    '.claude/skills/lw-notes/SKILL.md',
    [
      '---',
      'name: lw-notes',
      'description: Write trip notes. Use when a trip is planned.',
      '---',
      '# Trip notes',
      '',
      '1. Read `references/tides.md`.',
      '2. Fill `{workflow.template}` and save it under {planning_artifacts}.',
      '',
    ].join('\n'),
  );
  write('.claude/skills/lw-notes/customize.toml', '[workflow]\ntemplate = "assets/notes-template.md"\n');
  write('.claude/skills/lw-notes/references/tides.md', 'High tide at noon.\n');
  write('.claude/skills/lw-notes/assets/notes-template.md', '# Trip\n\nTide: {{tide}}\n');
  return { root, cleanup: () => fs.rmSync(root, { recursive: true, force: true }) };
}
