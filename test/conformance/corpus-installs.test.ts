/**
 * Every agent of the real installs (BMAD 6.0.4, 6.8.0 and 6.11.0, made by the installer) as a
 * session would start it: found where the installer put it, with its persona, its menu and, in the
 * skills era, the project's skill catalog and the skill tool; nothing that would stop a session.
 */
import * as path from 'node:path';
import { inspectBundle, listProject, type ProjectListing } from '../../bundle/inspect';
import { checkBundle } from '../../bundle/validate';
import { CORPUS, corpusPresent } from '../support/corpus';

const INSTALLS = ['installed/v6.0.4-claude-code', 'installed/v6.8.0-claude-code', 'installed/v6.11.0-claude-code'];

if (corpusPresent('corpus-installs', INSTALLS)) {
  describe.each(INSTALLS)('corpus install %s', (part) => {
    const root = path.join(CORPUS, part);
    const skillsEra = !part.includes('v6.0.');
    // The project's listing, made once for the three tests (nothing here changes the install).
    let listing: ProjectListing;
    beforeAll(async () => {
      listing = await listProject(root);
    });

    test('corpus install: the project lists its agents and, in the skills era, its skills', () => {
      expect(listing.kind).toBe('installed');
      expect(listing.projectRoot).toBe(root);
      expect(listing.agents.length).toBeGreaterThanOrEqual(5);
      if (skillsEra) {
        expect(listing.skills.length).toBeGreaterThanOrEqual(40);
        expect(listing.agents.every((a) => a.skill === true && a.id.startsWith('bmm/bmad-agent-'))).toBe(true);
        expect(listing.catalogTokens).toBeGreaterThan(1000);
      } else {
        expect(listing.skills).toEqual([]);
        expect(listing.agents.map((a) => a.id)).toContain('bmm/pm');
      }
    });

    test("corpus install: validate finds no problem (config keys the install leaves out have the installer's defaults)", async () => {
      const report = await checkBundle(root);
      expect(report.problems).toEqual([]);
      expect(report.checked.agents).toBe(listing.agents.length);
    });

    test('corpus install: every agent inspects with its persona, its menu and nothing that stops a session', async () => {
      for (const listed of listing.agents) {
        const inspection = await inspectBundle(root, listed.id);
        const { agent } = inspection;
        expect({ agent: listed.id, started: inspection.sessionWouldStart }).toEqual({ agent: listed.id, started: true });
        expect(agent.name.length).toBeGreaterThan(0);
        expect(`${agent.persona.role}${agent.persona.identity}`.length).toBeGreaterThan(20);
        expect(agent.commands.length).toBeGreaterThan(0);
        expect(inspection.systemPrompt).toContain(`You are ${agent.name}`);
        expect(inspection.context.writeRoots).toEqual([path.join(root, '_bmad-output')]);
        if (skillsEra) {
          expect(agent.dialect).toBe('skill');
          // Every menu item names a skill the project has, or runs a prompt.
          for (const command of inspection.commands) {
            for (const target of command.targets) if (target.kind === 'skill') expect({ skill: target.value, found: target.resolved !== undefined }).toEqual({ skill: target.value, found: true });
          }
          expect(inspection.systemPrompt).toContain('<available_skills>');
          expect(inspection.tools.map((t) => t.name)).toContain('activate_skill');
          expect(inspection.context.variables.planning_artifacts).toBe(path.join(root, '_bmad-output/planning-artifacts'));
        } else {
          expect(inspection.tools.map((t) => t.name)).not.toContain('activate_skill');
          expect(inspection.systemPrompt).not.toContain('<available_skills>');
        }
      }
    });
  });
}
