import { parseAgent } from '../../../bundle/agent-parser';
import { LimitExceededError, YamlSyntaxError } from '../../../bundle/errors';
import { MAX_CRITICAL_ACTIONS, MAX_XML_ELEMENTS, MAX_YAML_ALIASES, MAX_YAML_BYTES, MAX_YAML_DEPTH, MAX_YAML_TOKENS } from '../../../bundle/limits';
import { parseYamlSafe } from '../../../bundle/safe-yaml';
import { sourceAgent } from './fixtures';

const FILE = '/b/config.yaml';

function failure(text: string): LimitExceededError | YamlSyntaxError {
  try {
    parseYamlSafe(text, FILE);
  } catch (error) {
    if (error instanceof LimitExceededError || error instanceof YamlSyntaxError) return error;
    throw error;
  }
  throw new Error('expected a failure');
}

describe('safe-yaml', () => {
  test('parseYamlSafe: parses what the yaml package parses: mappings, lists, scalars, empty files', () => {
    expect(parseYamlSafe('a: 1\nb: [x, {c: true}]\nd: "{project-root}/docs"\n', FILE)).toEqual({
      a: 1,
      b: ['x', { c: true }],
      d: '{project-root}/docs',
    });
    expect(parseYamlSafe('', FILE)).toBeNull();
    expect(parseYamlSafe('# only a comment\n', FILE)).toBeNull();
    expect(parseYamlSafe('plain', FILE)).toBe('plain');
    expect(parseYamlSafe('base: &b {x: 1}\nuse: *b\n', FILE)).toEqual({ base: { x: 1 }, use: { x: 1 } });
  });

  test('parseYamlSafe: syntax errors, duplicate keys and several documents are YamlSyntaxError with file and line', () => {
    const syntax = failure('a: [unclosed\n');
    expect(syntax).toBeInstanceOf(YamlSyntaxError);
    expect(syntax.message).toMatch(/^Invalid YAML in \/b\/config\.yaml: .* at line \d+, column \d+$/);
    const dup = failure('a: 1\nb: 2\na: 3\n');
    expect(dup.message).toBe('Invalid YAML in /b/config.yaml: Map keys must be unique at line 3, column 1');
    expect(dup).toMatchObject({ line: 3, file: FILE, detail: 'Map keys must be unique at line 3, column 1' });
    expect(failure('nested:\n  x: 1\n  x: 2\n').message).toContain('Map keys must be unique at line 3');
    expect(failure('a: 1\n---\nb: 2\n').message).toContain('one is expected');
    expect(failure('a: *missing\n')).toBeInstanceOf(YamlSyntaxError);
    expect(failure('cyc: &c [*c]\n').message).toContain('an alias refers to a collection that contains it');
  });

  test('parseYamlSafe: each limit is a LimitExceededError naming the file and the limit', () => {
    const cases: [string, string][] = [
      [`a: ${'x'.repeat(MAX_YAML_BYTES)}`, 'MAX_YAML_BYTES'],
      [`a: ${'['.repeat(MAX_YAML_DEPTH + 1)}${']'.repeat(MAX_YAML_DEPTH + 1)}`, 'MAX_YAML_DEPTH'],
      [`a: [${'1,'.repeat(10_001)}]`, 'MAX_YAML_ENTRIES'],
      [`a: [${', '.repeat(MAX_YAML_TOKENS / 2)}]`, 'MAX_YAML_TOKENS'],
      [`a: &x 1\nb: [${Array.from({ length: MAX_YAML_ALIASES + 1 }, () => '*x').join(', ')}]`, 'MAX_YAML_ALIASES'],
      [`a: [${Array.from({ length: 101 }, (_, i) => `&a${i} 1`).join(', ')}]`, 'MAX_YAML_ANCHORS'],
      [`a0: &a0 [x, x]\n${Array.from({ length: 20 }, (_, i) => `a${i + 1}: &a${i + 1} [*a${i}, *a${i}]`).join('\n')}`, 'YAML_MAX_ALIAS_COUNT'],
    ];
    for (const [text, limit] of cases) {
      const error = failure(text);
      expect(error).toBeInstanceOf(LimitExceededError);
      expect(error).toMatchObject({ limit, file: FILE });
      expect(error.message).toContain(FILE);
      expect(error.message).toContain(limit);
    }
    // Just inside the depth limit is fine.
    expect(parseYamlSafe(`a: ${'['.repeat(MAX_YAML_DEPTH - 1)}${']'.repeat(MAX_YAML_DEPTH - 1)}`, FILE)).toBeDefined();
  });

  test('parseAgent: element and critical-action counts are bounded too', () => {
    const many = `<agent name="A" title="T"><persona>${'<p/>'.repeat(MAX_XML_ELEMENTS)}</persona></agent>`;
    expect(() => parseAgent(many, '/b/agents/a.md')).toThrow(LimitExceededError);
    expect(() => parseAgent(many, '/b/agents/a.md')).toThrow(/^Agent file \/b\/agents\/a\.md has more than 10000 elements \(line 1\) \(limit MAX_XML_ELEMENTS: 10000\)$/);
    const actions = sourceAgent(Array.from({ length: MAX_CRITICAL_ACTIONS + 1 }, (_, i) => `Step ${i}`));
    expect(() => parseAgent(actions, '/b/agents/a.md')).toThrow(/has 101 critical actions \(limit MAX_CRITICAL_ACTIONS: 100\)/);
    expect(parseAgent(sourceAgent(Array.from({ length: MAX_CRITICAL_ACTIONS }, (_, i) => `Step ${i}`)), '/b/agents/a.md').criticalActions).toHaveLength(100);
  });
});
