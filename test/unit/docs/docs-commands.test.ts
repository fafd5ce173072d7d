/**
 * Every `loopwright …` command line the docs show is one the command line takes: the command
 * lines of code blocks (`sh`, `text`, …) in docs/ and README.md give known commands, known options and the right
 * number of arguments; the commands mentioned in prose (`loopwright status <id>`) name known
 * commands and options. A renamed command or flag fails here until the docs follow.
 */
import { checkArgs, docsProgram, loopwrightArgs, shellCommands } from './command-lines';
import { codeBlockLines, docFiles, inlineCode } from './docs-files';

const program = docsProgram();

test('docs commands: every loopwright command line in a code block of docs/ and README.md parses against the command definitions', () => {
  const problems: string[] = [];
  let checked = 0;
  for (const file of docFiles()) {
    // A block that names no language holds output or a diagram (a trace's span tree), not commands.
    for (const { line, text } of codeBlockLines(file).filter(({ lang }) => lang !== '')) {
      // A terminal transcript's prompt (`$ loopwright …`) is not part of the command; three spaces or more start
      // an annotation in a diagram (`loopwright send    the command …`), as `#` starts a comment.
      for (const words of shellCommands(text.replace(/^\s*\$\s+/, '').replace(/(\S)\s{3,}(?!#).*$/, '$1'))) {
        const args = loopwrightArgs(words);
        if (!args) continue;
        checked++;
        for (const problem of checkArgs(program, args, true)) problems.push(`${file}:${line}: ${problem}\n    ${text.trim()}`);
      }
    }
  }
  expect(problems).toEqual([]);
  // The docs show many: a change that stopped finding them would pass for nothing.
  expect(checked).toBeGreaterThan(100);
});

test('docs commands: every loopwright command named in the prose of docs/ and README.md is a known command with known options', () => {
  const problems: string[] = [];
  let checked = 0;
  for (const file of docFiles()) {
    for (const { line, text } of inlineCode(file)) {
      const words = shellCommands(text)[0];
      const args = words && loopwrightArgs(words);
      if (!args) continue;
      checked++;
      for (const problem of checkArgs(program, args, false)) problems.push(`${file}:${line}: ${problem}\n    ${text}`);
    }
  }
  expect(problems).toEqual([]);
  expect(checked).toBeGreaterThan(50);
});

test('docs commands: the checker refuses an unknown command, an unknown option and a missing argument', () => {
  expect(checkArgs(program, ['rnu', 'b', 'a', 'm'], true)).toEqual(['unknown command "loopwright rnu"']);
  expect(checkArgs(program, ['run', 'b', 'a', 'm', '--frm'], true)).toEqual(['unknown option --frm of "loopwright run"']);
  expect(checkArgs(program, ['send', '<id>'], true)).toEqual(['"loopwright send" needs 2 argument(s), got 1']);
  expect(checkArgs(program, ['schedule', 'create', 'n', 'b', 'a', 'm', '--every', '1h'], true)).toEqual([]);
  expect(checkArgs(program, ['server', 'start', '--detach'], true)).toEqual([]);
  expect(checkArgs(program, ['schedule', 'restart'], true)).toEqual(['unknown command "loopwright schedule restart"']);
  expect(checkArgs(program, ['server', 'restart'], true)).toEqual(['"loopwright server start" takes at most 0 argument(s), got 1: restart']);
  expect(loopwrightArgs(shellCommands('LOOPWRIGHT_SERVE_TOKEN=$(openssl rand -hex 16) loopwright serve --host 0.0.0.0 # c')[0]!)).toEqual(['serve', '--host', '0.0.0.0']);
  expect(shellCommands("printf '*intake\\n/end\\n' | ./bin/loopwright.js chat b a").map(loopwrightArgs)).toEqual([undefined, ['chat', 'b', 'a']]);
});
