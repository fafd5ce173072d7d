/**
 * Command rules (common/commands/command-rules.ts, command-line.ts), as pure functions: a rule's
 * words as a prefix, `*`, path variables in the rule and the command, white space, control
 * operators (every part must be allowed), what the rules cannot judge, deny over allow, deny seen
 * inside substitutions and through wrappers, requests that never grant, a skill's `allowed-tools`,
 * and which rules are refused.
 */
import { type CommandRules, commandRequestsOf, commandRuleProblem, isRepeatable, judgeCommand, mergeCommandRules, normalizedRule, ruleCovers } from '../../../common/commands/command-rules';
import { fillCommandVariables, readCommandLine } from '../../../common/commands/command-line';

const VARIABLES = { 'project-root': '/home/me/shop', output_folder: '/home/me/shop/docs', odd: "/tmp/a b;c'd" };

function rules(allow: string[], deny: string[] = [], requests: string[] = []): CommandRules {
  return {
    allow: allow.map((pattern) => ({ pattern, source: 'allow' })),
    deny: deny.map((pattern) => ({ pattern, source: 'deny' })),
    requests: requests.map((pattern) => ({ pattern, source: 'request' })),
  };
}

function verdict(command: string, given: CommandRules): string {
  return judgeCommand(command, given, VARIABLES).verdict;
}

describe('ruleCovers: words as a prefix, * for any run of characters', () => {
  test.each([
    ['git status', 'git status', true],
    ['git status', 'git status -s', true],
    ['git status', 'git statusx', false],
    ['git status', 'git', false],
    ['git status*', 'git statusx', true],
    ['git', 'git push --force', true],
    ['npm run test:*', 'npm run test', true],
    ['uv run /p/_bmad/scripts/*', 'uv run /p/_bmad/scripts/resolve.py --project-root /p', true],
    ['uv run /p/_bmad/scripts/*', 'uv run /p/other.py', false],
    ['*', 'anything at all', true],
    ['git * --dry-run', 'git push origin --dry-run', true],
    ['git * --dry-run', 'git push origin', false],
  ])('%j covers %j: %s', (rule, command, covered) => {
    expect(ruleCovers(normalizedRule(rule), command)).toBe(covered);
  });

  test('a trailing :* is a prefix, as coding agents write it; white space outside quotes is one space', () => {
    expect(normalizedRule('git:*')).toBe('git');
    expect(normalizedRule('  git   log  ')).toBe('git log');
    expect(normalizedRule("echo 'a   b'")).toBe("echo 'a   b'");
    expect(verdict('git    status\t-s', rules(['git status']))).toBe('allow');
    expect(verdict("echo 'a  b'", rules(["echo 'a b'"]))).toBe('ask');
  });

  test('many stars stay quick (no regular expression is built from a rule)', () => {
    const rule = `${'a*'.repeat(30)}b`;
    const started = Date.now();
    expect(ruleCovers(rule, 'a'.repeat(5000))).toBe(false);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe('judgeCommand', () => {
  test('no rule covers it: it waits for a person', () => {
    expect(judgeCommand('make build', rules(['git status']), VARIABLES)).toEqual({ verdict: 'ask', requestedBy: [] });
    expect(verdict('make build', {})).toBe('ask');
  });

  test('an allow rule lets a command run, naming the rule', () => {
    expect(judgeCommand('git status -s', rules(['git status']), VARIABLES)).toEqual({ verdict: 'allow', rules: [{ pattern: 'git status', source: 'allow' }] });
  });

  test('path variables: the rule and the command are compared as written and filled in', () => {
    const scripts = rules(['uv run {project-root}/_bmad/scripts/*']);
    expect(verdict('uv run {project-root}/_bmad/scripts/resolve_config.py --project-root {project-root}', scripts)).toBe('allow');
    expect(verdict('uv run /home/me/shop/_bmad/scripts/resolve_config.py', scripts)).toBe('allow');
    expect(verdict('uv run /elsewhere/_bmad/scripts/x.py', scripts)).toBe('ask');
    // A rule written with the folder itself covers the command written with the variable.
    expect(verdict('ls {output_folder}', rules(['ls /home/me/shop/docs']))).toBe('allow');
    // A value the shell would split is one quoted word on both sides, as run_command fills it.
    expect(fillCommandVariables('ls {odd}/x {unknown}', VARIABLES)).toBe(`ls '/tmp/a b;c'\\''d'/x {unknown}`);
    expect(verdict('ls {odd}', rules(['ls {odd}']))).toBe('allow');
    expect(verdict('cat {odd}', rules(['cat /tmp/a b*']))).toBe('ask');
  });

  test('control operators: a line runs on allow rules only when every part is covered', () => {
    expect(verdict('git status; rm -rf x', rules(['git status*']))).toBe('ask');
    expect(verdict('git status && rm -rf x', rules(['git status*']))).toBe('ask');
    expect(verdict('git status || rm -rf x', rules(['git status*']))).toBe('ask');
    expect(verdict('git status | sh', rules(['git status*']))).toBe('ask');
    expect(verdict('git status & rm -rf x', rules(['git status*']))).toBe('ask');
    expect(verdict('git status\nrm -rf x', rules(['git status*']))).toBe('ask');
    expect(verdict('git status |& tee', rules(['git status*']))).toBe('ask');
    expect(judgeCommand('git status && git diff | head -20', rules(['git status', 'git diff', 'head']), VARIABLES)).toEqual({
      verdict: 'allow',
      rules: [
        { pattern: 'git status', source: 'allow' },
        { pattern: 'git diff', source: 'allow' },
        { pattern: 'head', source: 'allow' },
      ],
    });
  });

  test('operators inside quotes or escaped are words, not operators', () => {
    expect(verdict("git commit -m 'fix; rm -rf x'", rules(['git commit']))).toBe('allow');
    expect(verdict('git commit -m "a && b | c"', rules(['git commit']))).toBe('allow');
    expect(verdict('echo a \\; rm x', rules(['echo']))).toBe('allow');
    expect(readCommandLine('echo \'a;b\' "c|d" e\\&f').parts).toEqual(['echo \'a;b\' "c|d" e\\&f']);
  });

  test('what the rules cannot judge waits, even when every word is allowed: substitutions, subshells, redirections to files, comments, open quotes', () => {
    const all = rules(['echo', 'git status', 'cat']);
    for (const [line, why] of [
      ['echo $(rm -rf x)', 'a command substitution'],
      ['echo `rm -rf x`', 'a command substitution'],
      ['echo "$(id)"', 'a command substitution'],
      ['(git status)', 'a subshell or group in parentheses'],
      ['echo x > /home/me/.bashrc', 'a redirection to a file'],
      ['echo x >> notes.md', 'a redirection to a file'],
      ['cat < /etc/passwd', 'a redirection from a file'],
      ['cat <<EOF', 'a here-document'],
      ['git status # ; rm -rf x', 'a comment'],
      ["echo 'open", 'an unclosed quote'],
      ['cat <(rm -rf x)', 'a redirection from a file'],
    ]) {
      expect([line, judgeCommand(line!, all, VARIABLES)]).toEqual([line, { verdict: 'ask', requestedBy: [], opaque: why }]);
    }
  });

  test('redirections that touch no file are left out: 2>&1, >&2, >/dev/null', () => {
    expect(readCommandLine('npm test 2>&1 | tail -5').parts).toEqual(['npm test', 'tail -5']);
    expect(readCommandLine('git fetch >/dev/null 2>/dev/null && echo ok >&2').parts).toEqual(['git fetch', 'echo ok']);
    expect(readCommandLine('make &>/dev/null').parts).toEqual(['make']);
    expect(verdict('npm test 2>&1 | tail -5', rules(['npm test', 'tail']))).toBe('allow');
    // `a2>` is the argument a2 and a redirection of the output: still to /dev/null.
    expect(readCommandLine('echo a2>/dev/null').parts).toEqual(['echo a2']);
  });

  test("ANSI-C quotes ($'...') are read as the shell reads them: an escaped quote does not end them", () => {
    const line = "echo $'\\'' ; rm -rf x ; echo 'y'";
    expect(readCommandLine(line).parts).toEqual(["echo $'\\''", 'rm -rf x', "echo 'y'"]);
    expect(verdict(line, rules(['echo']))).toBe('ask');
  });

  test('deny beats allow, names the rule and the command it covered', () => {
    expect(judgeCommand('git push --force', rules(['git'], ['git push']), VARIABLES)).toEqual({ verdict: 'deny', rule: { pattern: 'git push', source: 'deny' }, command: 'git push --force' });
    expect(verdict('git status', rules(['git'], ['git push']))).toBe('allow');
    expect(verdict('git status && git push', rules(['git'], ['git push']))).toBe('deny');
    expect(verdict('rm -rf x', rules(['*'], ['*']))).toBe('deny');
  });

  test('deny sees inside substitutions and parentheses, through quotes, assignments, wrappers and paths', () => {
    const rm = rules([], ['rm']);
    for (const line of [
      'echo $(rm -rf x)',
      'echo "$(rm -rf x)"',
      'echo `rm -rf x`',
      '(cd docs && rm -rf x)',
      'true; { rm -rf x; }',
      '"rm" -rf x',
      'r\\m -rf x',
      'FOO=1 rm -rf x',
      'sudo -E rm -rf x',
      'env FOO=1 nice -n 5 rm -rf x',
      'timeout 10 rm x',
      '/bin/rm -rf x',
      'find . | xargs rm',
    ]) {
      expect([line, verdict(line, rm)]).toEqual([line, 'deny']);
    }
    // Not a command rm: the word only.
    expect(verdict('echo rm', rm)).toBe('ask');
    expect(verdict("echo 'rm -rf x'", rm)).toBe('ask');
    expect(verdict('rmdir x', rm)).toBe('ask');
  });

  test('a deny rule with a variable covers the command written either way', () => {
    const deny = rules([], ['rm -rf {project-root}*']);
    expect(verdict('rm -rf /home/me/shop', deny)).toBe('deny');
    expect(verdict('rm -rf {project-root}/docs', deny)).toBe('deny');
  });

  test('requests never grant: the line waits, and the requests that cover it are named', () => {
    const asked = rules([], [], ['uv run *', 'git']);
    expect(judgeCommand('uv run x.py', asked, VARIABLES)).toEqual({ verdict: 'ask', requestedBy: [{ pattern: 'uv run *', source: 'request' }] });
    expect(judgeCommand('uv run x.py && git status', asked, VARIABLES)).toEqual({
      verdict: 'ask',
      requestedBy: [
        { pattern: 'uv run *', source: 'request' },
        { pattern: 'git', source: 'request' },
      ],
    });
    // A part no request covers: none is named.
    expect(judgeCommand('uv run x.py && make', asked, VARIABLES)).toEqual({ verdict: 'ask', requestedBy: [] });
    // Deny rules still apply to what a skill asks for.
    expect(verdict('git push', rules([], ['git push'], ['git']))).toBe('deny');
  });
});

describe('rules and requests from their sources', () => {
  test('commandRuleProblem: one simple command, not empty, not too long', () => {
    expect(commandRuleProblem('uv run {project-root}/_bmad/scripts/*')).toBeUndefined();
    expect(commandRuleProblem('git:*')).toBeUndefined();
    expect(commandRuleProblem('npm test 2>&1')).toBeUndefined();
    expect(commandRuleProblem('   ')).toBe('a command rule must not be empty');
    expect(commandRuleProblem('x'.repeat(1001))).toMatch(/at most 1000 characters/);
    for (const bad of ['git status; rm', 'a && b', 'a | b', 'echo $(id)', 'echo `id`', '(a)', 'echo > f', "echo 'open"]) {
      expect([bad, commandRuleProblem(bad)]).toEqual([bad, expect.stringMatching(/^a command rule is one simple command/)]);
    }
  });

  test("commandRequestsOf: a skill's allowed-tools as command patterns (Bash entries only)", () => {
    expect(commandRequestsOf(['Bash(git:*)', 'Bash(jq:*)', 'Read'])).toEqual(['git', 'jq']);
    // The field is split on white space when read: an entry's words are joined again.
    expect(commandRequestsOf(['Bash(npm', 'run', 'test:*)', 'Write'])).toEqual(['npm run test']);
    expect(commandRequestsOf(['Bash(uv run {skill-root}/scripts/*)'.split(' ')].flat())).toEqual(['uv run {skill-root}/scripts/*']);
    expect(commandRequestsOf(['Bash'])).toEqual(['*']);
    expect(commandRequestsOf(['Bash(*)'])).toEqual(['*']);
    expect(commandRequestsOf(['Bash(a;', 'b)', 'NotBash(x)', 'Read'])).toEqual([]);
    expect(commandRequestsOf([])).toEqual([]);
  });

  test('mergeCommandRules keeps every rule in order and drops empty sets', () => {
    expect(mergeCommandRules(undefined, { allow: [] })).toBeUndefined();
    expect(mergeCommandRules({ allow: [{ pattern: 'a', source: 's' }] }, { allow: [{ pattern: 'b', source: 't' }], deny: [{ pattern: 'c', source: 't' }] })).toEqual({
      allow: [
        { pattern: 'a', source: 's' },
        { pattern: 'b', source: 't' },
      ],
      deny: [{ pattern: 'c', source: 't' }],
    });
  });

  test('isRepeatable: every command of the line covered by a repeatable rule, nothing opaque; allow and deny rules do not count', () => {
    const rules: CommandRules = {
      repeatable: [
        { pattern: 'uv run {project-root}/_bmad/scripts/resolve_config.py', source: 's' },
        { pattern: 'git status', source: 's' },
      ],
      allow: [{ pattern: 'rm *', source: 's' }],
    };
    const variables = { 'project-root': '/p' };
    expect(isRepeatable('uv run {project-root}/_bmad/scripts/resolve_config.py --project-root /p', rules, variables)).toBe(true);
    expect(isRepeatable('uv run /p/_bmad/scripts/resolve_config.py', rules, variables)).toBe(true);
    expect(isRepeatable('git status && git status -s', rules, variables)).toBe(true);
    expect(isRepeatable('git status; rm -rf x', rules, variables)).toBe(false);
    expect(isRepeatable('git status > out.txt', rules, variables)).toBe(false);
    expect(isRepeatable('rm x', rules, variables)).toBe(false);
    expect(isRepeatable('git status', { allow: [{ pattern: 'git status', source: 's' }] }, variables)).toBe(false);
    expect(isRepeatable('git status', undefined, variables)).toBe(false);
  });
});
