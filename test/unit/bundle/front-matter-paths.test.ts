import { frontMatterPaths } from '../../../bundle/front-matter-paths';

describe('front-matter-paths', () => {
  const file = '/p/_bmad/bmm/workflows/prd/steps-c/step-01-init.md';
  const variables = { planning_artifacts: '/p/_bmad-output/planning-artifacts', 'project-root': '/p' };

  test('frontMatterPaths: relative paths from the file, path variables filled; other values left out', () => {
    const content = [
      '---',
      "name: 'step-01-init'",
      "nextStepFile: './step-02-discovery.md'",
      "template: '../templates/prd.md'",
      "outputFile: '{planning_artifacts}/prd.md'",
      "main_config: '{project-root}/_bmad/bmm/config.yaml'",
      "unknown: '{nowhere}/x.md'",
      'count: 3',
      '---',
      '# Step 1',
    ].join('\n');
    expect(frontMatterPaths(file, content, variables)).toEqual({
      nextStepFile: '/p/_bmad/bmm/workflows/prd/steps-c/step-02-discovery.md',
      template: '/p/_bmad/bmm/workflows/prd/templates/prd.md',
      outputFile: '/p/_bmad-output/planning-artifacts/prd.md',
      main_config: '/p/_bmad/bmm/config.yaml',
    });
  });

  test('frontMatterPaths: nothing for a file without front matter, with broken YAML, without paths, or not Markdown', () => {
    expect(frontMatterPaths(file, '# Step 1', variables)).toBeUndefined();
    expect(frontMatterPaths(file, '---\nname: [unclosed\n---\n', variables)).toBeUndefined();
    expect(frontMatterPaths(file, "---\nname: 'x'\n---\n", variables)).toBeUndefined();
    expect(frontMatterPaths('/p/config.yaml', "---\nnext: './a.md'\n---\n", variables)).toBeUndefined();
  });
});
