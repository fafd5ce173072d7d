/**
 * Tool allow-lists: names or patterns of the tools a session or an agent offers (`tools:` in
 * bundle.yaml, `SessionInput.tools`, `--tools`) or lets run without approval (`--allow-tool`). A
 * pattern is a tool name in which `*` stands for any run of characters, empty included:
 * `github__*` is every tool of the MCP server `github`, `*_file` is `read_file`. Nothing else is
 * special. Pure functions with no imports: workflow code may use them.
 */

/** What an allow-list entry may hold: letters, digits, `_`, `-` and `*`, at most 128 characters. */
export const TOOL_PATTERN = /^[A-Za-z0-9_*-]{1,128}$/;

/** What an entry may hold, in words (for messages). */
export const TOOL_PATTERN_RULE = 'a tool name or pattern takes letters, digits, _, - and * (at most 128 characters)';

/**
 * Whether the tool `name` matches `pattern`: the same name, or with `*` standing for any run of
 * characters. Linear in practice, never exponential: a greedy match that backtracks to the last `*`
 * only (no regular expression is built from the pattern).
 */
export function matchesToolPattern(pattern: string, name: string): boolean {
  if (!pattern.includes('*')) return pattern === name;
  let p = 0;
  let n = 0;
  let star = -1;
  let resume = 0;
  while (n < name.length) {
    if (p < pattern.length && pattern[p] !== '*' && pattern[p] === name[n]) {
      p += 1;
      n += 1;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p;
      resume = n;
      p += 1;
    } else if (star >= 0) {
      p = star + 1;
      resume += 1;
      n = resume;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === '*') p += 1;
  return p === pattern.length;
}

/** Whether any entry of `patterns` matches the tool `name`. */
export function allowedByPatterns(patterns: readonly string[], name: string): boolean {
  return patterns.some((pattern) => matchesToolPattern(pattern, name));
}
