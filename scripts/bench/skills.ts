/**
 * What Agent Skills cost a session: a temp project with 50 generated skills (1-3 KB of description
 * and body each, a few reference files), discovered as a session start would (median of several
 * runs), and the tokens spent before the first answer with the catalog (names and descriptions
 * only, the guide's tier 1) against loading every SKILL.md body up front. No Temporal server and no
 * model: discovery and the catalog are plain file reads and text.
 */
import { mulberry32 } from '../../test/support/prng';
import { initializeAgent } from '../../bundle/initialize-agent';
import type { ChatMessage } from '../../common/messages';
import { builtInToolDefinitions, LOOP_TOOL_DEFINITIONS } from '../../common/tool-definitions';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { estimateMessageTokens, estimateTextTokens, estimateToolTokens } from '../../common/token-estimate';
import { catalogTokens, DEFAULT_SKILL_TOOL, skillCatalog } from '../../bundle/skills/catalog';
import { discoverSkills } from '../../bundle/skills/discover';
import { skillBody } from '../../bundle/skills/skill-file';
import { median, summarize, type SampleSummary } from './stats';
import { bytes, ms, textTable } from './text-table';

/** Skills in the generated project. */
const SKILLS = 50;
/** Timed discoveries, after untimed ones that warm the file-system cache and the code. */
const RUNS = 21;
const WARMUP = 3;

/** The skills part's figures. */
export interface SkillsFigures {
  skills: number;
  /** SKILL.md bytes, all skills together, and the smallest and largest. */
  skillFileBytes: { total: number; min: number; max: number };
  referenceFiles: number;
  /** One `discoverSkills` of the project, in ms. */
  discovery: SampleSummary;
  /** The catalog's text, as the system prompt would carry it. */
  catalogBytes: number;
  catalogTokens: number;
  /** Every SKILL.md body loaded up front instead. */
  allBodiesTokens: number;
  /** One activation: the median body's tokens. */
  medianBodyTokens: number;
  /**
   * The first model request of a session of the project (its system prompt and opening messages as
   * `initializeAgent` makes them, the tool definitions, a short user message), with the catalog,
   * and with every SKILL.md body added up front instead.
   */
  firstRequestTokens: number;
  firstRequestAllBodiesTokens: number;
}

/** Builds the project, measures, and removes the project. */
export async function measureSkills(options: { progress: (line: string) => void }): Promise<SkillsFigures> {
  const project = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'loopwright-bench-skills-')));
  try {
    options.progress(`skills: generating ${SKILLS} skills in ${project}`);
    const generated = await generateProject(project);
    const check = (found: number) => {
      if (found !== SKILLS) throw new Error(`skills bench: discovery found ${found} skills, expected ${SKILLS}`);
    };
    for (let i = 0; i < WARMUP; i++) check((await discoverSkills({ projectRoot: project })).skills.length);
    const samples: number[] = [];
    let last = await discoverSkills({ projectRoot: project });
    for (let i = 0; i < RUNS; i++) {
      const started = performance.now();
      last = await discoverSkills({ projectRoot: project });
      samples.push(performance.now() - started);
      check(last.skills.length);
    }
    if (last.diagnostics.length > 0) throw new Error(`skills bench: unexpected diagnostics: ${last.diagnostics.map((d) => d.message).join('; ')}`);

    const catalog = skillCatalog(last.skills, { toolName: DEFAULT_SKILL_TOOL });
    // The session's first request, as initialisation builds it for this folder of skills.
    const started = await initializeAgent({ bundlePath: project, agentId: '' });
    const user: ChatMessage = { role: 'user', content: 'Write the release notes for this week.' };
    const firstRequestTokens =
      [...started.messages, user].reduce((sum, m) => sum + estimateMessageTokens(m), 0) + estimateToolTokens([...builtInToolDefinitions({ skills: true }), ...LOOP_TOOL_DEFINITIONS]);
    const bodyTokens = generated.texts.map((text) => estimateTextTokens(skillBody(text)));
    const sizes = generated.texts.map((text) => Buffer.byteLength(text));
    return {
      skills: SKILLS,
      skillFileBytes: { total: sizes.reduce((a, b) => a + b, 0), min: Math.min(...sizes), max: Math.max(...sizes) },
      referenceFiles: generated.referenceFiles,
      discovery: summarize(samples),
      catalogBytes: Buffer.byteLength(catalog),
      catalogTokens: catalogTokens(last.skills),
      allBodiesTokens: bodyTokens.reduce((a, b) => a + b, 0),
      medianBodyTokens: median(bodyTokens),
      firstRequestTokens,
      firstRequestAllBodiesTokens: firstRequestTokens - catalogTokens(last.skills) + bodyTokens.reduce((a, b) => a + b, 0),
    };
  } finally {
    await fs.rm(project, { recursive: true, force: true });
  }
}

/** The skills part as text. */
export function formatSkills(f: SkillsFigures): string {
  const saved = f.allBodiesTokens - f.catalogTokens;
  return [
    `Skills: discovery and the catalog for ${f.skills} generated skills in <project>/.claude/skills (SKILL.md ${bytes(f.skillFileBytes.min)}..${bytes(f.skillFileBytes.max)} bytes,` +
      ` ${bytes(f.skillFileBytes.total)} in all; ${f.referenceFiles} reference files); no Temporal server`,
    textTable(
      ['measure', 'value'],
      [
        [`discovery, ms median (min..max) of ${f.discovery.runs} runs`, `${ms(f.discovery.median, 2)} (${ms(f.discovery.min, 2)}..${ms(f.discovery.max, 2)})`],
        ['catalog in the system prompt, bytes', bytes(f.catalogBytes)],
        ['catalog, tokens (estimate)', `${bytes(f.catalogTokens)} (${(f.catalogTokens / f.skills).toFixed(0)} per skill)`],
        ['every SKILL.md body up front, tokens', bytes(f.allBodiesTokens)],
        ['one activation (median body), tokens', bytes(f.medianBodyTokens)],
        ['first request of a session, tokens (catalog)', bytes(f.firstRequestTokens)],
        ['first request with every body up front, tokens', bytes(f.firstRequestAllBodiesTokens)],
      ],
    ),
    `   Before the first answer, the catalog costs ${bytes(f.catalogTokens)} tokens against ${bytes(f.allBodiesTokens)} for every body up front:` +
      ` ${bytes(saved)} fewer (${((100 * f.catalogTokens) / f.allBodiesTokens).toFixed(1)} %); a skill's body is paid only when it is used.` +
      ` A session's whole first request: ${bytes(f.firstRequestTokens)} tokens against ${bytes(f.firstRequestAllBodiesTokens)}` +
      ` (${((100 * f.firstRequestTokens) / f.firstRequestAllBodiesTokens).toFixed(1)} %).`,
  ].join('\n');
}

const AREAS = ['release notes', 'API reviews', 'database migrations', 'incident reports', 'test plans', 'sprint planning', 'code reviews', 'user research', 'threat models', 'data pipelines'];
const VERBS = ['Drafts', 'Reviews', 'Checks', 'Summarizes', 'Plans', 'Audits', 'Refactors', 'Documents', 'Validates', 'Triages'];
const WORDS = (
  'read the input carefully then list the open questions before writing anything confirm the scope with the user ' +
  'keep each section short and name the files you touched prefer small steps and verify each one record what you ' +
  'decided and why so the next reader can follow stop and ask when the requirements conflict'
).split(' ');

function sentence(next: () => number, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(WORDS[Math.floor(next() * WORDS.length)]!);
  const text = out.join(' ');
  return `${text[0]!.toUpperCase()}${text.slice(1)}.`;
}

/** Writes the 50 skills (and their reference files); returns each SKILL.md's text. */
async function generateProject(project: string): Promise<{ texts: string[]; referenceFiles: number }> {
  // Seeded: every run measures the same project.
  const next = mulberry32(20_240_611);
  const texts: string[] = [];
  let referenceFiles = 0;
  for (let i = 0; i < SKILLS; i++) {
    const area = AREAS[i % AREAS.length]!;
    const name = `${area.toLowerCase().replace(/ /g, '-')}-${String(i + 1).padStart(2, '0')}`;
    const dir = path.join(project, '.claude/skills', name);
    const references = 1 + Math.floor(next() * 3);
    const description =
      `${VERBS[i % VERBS.length]} ${area} for the team. Use when the user asks for help with ${area}, ` +
      `mentions ${area.split(' ')[0]} or wants a second opinion. ${sentence(next, 12 + Math.floor(next() * 20))}`;
    // Body: 1-3 KB with the description; steps, then the references it points at.
    const targetBytes = 1024 + Math.floor(next() * 2048) - description.length;
    const lines = [`# ${area[0]!.toUpperCase()}${area.slice(1)} (${name})`, '', '## Steps', ''];
    let step = 1;
    while (lines.join('\n').length < targetBytes - 200) lines.push(`${step++}. ${sentence(next, 8 + Math.floor(next() * 16))}`);
    lines.push('', '## References', '');
    for (let r = 1; r <= references; r++) lines.push(`- Load \`references/part-${r}.md\` when step ${r} needs detail.`);
    const text = `---\nname: ${name}\ndescription: ${JSON.stringify(description)}\n---\n\n${lines.join('\n')}\n`;
    await fs.mkdir(path.join(dir, 'references'), { recursive: true });
    await fs.writeFile(path.join(dir, 'SKILL.md'), text);
    for (let r = 1; r <= references; r++) {
      const reference = Array.from({ length: 10 + Math.floor(next() * 20) }, () => sentence(next, 12)).join('\n');
      await fs.writeFile(path.join(dir, 'references', `part-${r}.md`), `# Part ${r}\n\n${reference}\n`);
      referenceFiles++;
    }
    texts.push(text);
  }
  return { texts, referenceFiles };
}
