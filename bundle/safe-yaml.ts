/**
 * The one way the bundle runtime parses YAML (`config.yaml`, `workflow.yaml`, `bundle.yaml`):
 * the `yaml` package, with every input bounded before the expensive steps, because a parse runs
 * on the worker's event loop and nothing can interrupt it once started.
 *
 * 1. Size: at most `MAX_YAML_BYTES`, checked before anything else.
 * 2. The `yaml` package's concrete syntax tree (linear time; it is iterative, so deep nesting
 *    cannot overflow the stack) is walked without recursion to count tokens, entries, nesting
 *    depth, anchors and aliases against their limits, before the document is composed (composing
 *    is recursive, costs about 10 µs per token that is an error, and resolving an alias walks the
 *    whole document).
 * 3. The document is composed with `uniqueKeys: false`, since the package's own duplicate-key check
 *    compares every key with every other (100,000 keys took minutes); duplicates are found here
 *    with one set per mapping and are still an error.
 * 4. It becomes plain data with `maxAliasCount` (the package's guard against alias bombs), and,
 *    when the file has aliases, the result is checked for cycles (`a: &a [*a]` makes an array
 *    that holds itself) and for its size once aliases are expanded.
 *
 * Only the first error is reported, with its line and column: the package would otherwise format
 * a context snippet for every error, which costs quadratic time on a long line full of errors.
 */
import { Composer, isMap, isPair, isScalar, isSeq, LineCounter, Parser, type CST, type Document } from 'yaml';
import { LimitExceededError, YamlSyntaxError } from './errors';
import { MAX_YAML_ALIASES, MAX_YAML_ANCHORS, MAX_YAML_BYTES, MAX_YAML_DEPTH, MAX_YAML_ENTRIES, MAX_YAML_TOKENS, YAML_MAX_ALIAS_COUNT } from './limits';

/**
 * Parses the YAML `text` of `file` into plain data (`null` for an empty file). Throws
 * `LimitExceededError` when the text is over a limit of `limits.ts`, `YamlSyntaxError` when it
 * does not parse (both name the file).
 */
export function parseYamlSafe(text: string, file: string): unknown {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_YAML_BYTES) {
    throw new LimitExceededError(`YAML file ${file} is too large to parse: ${bytes} bytes`, 'MAX_YAML_BYTES', MAX_YAML_BYTES, { file });
  }
  const lines = new LineCounter();
  const tokens = [...new Parser(lines.addNewLine).parse(text)];
  const stats = checkSyntaxTree(tokens, file, lines);

  // `logLevel: 'error'`: the package would print warnings (a collection used as a key) to stderr.
  const docs = [...new Composer({ uniqueKeys: false, logLevel: 'error' }).compose(tokens, true, text.length)];
  const doc = docs[0];
  if (docs.length > 1) {
    throw syntaxError(file, 'the file holds several documents; one is expected', lines, docs[1].range[0]);
  }
  const first = doc.errors[0];
  if (first) throw syntaxError(file, first.message, lines, first.pos[0], first);
  checkUniqueKeys(doc, file, lines);

  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: YAML_MAX_ALIAS_COUNT });
  } catch (error) {
    if (error instanceof Error && /excessive alias count/i.test(error.message)) {
      throw new LimitExceededError(`YAML aliases in ${file} expand to too many nodes`, 'YAML_MAX_ALIAS_COUNT', YAML_MAX_ALIAS_COUNT, {
        file,
      });
    }
    throw new YamlSyntaxError(file, error instanceof Error ? error.message : String(error), { cause: error });
  }
  if (stats.aliases > 0) checkExpanded(value, file);
  return value;
}

interface TreeStats {
  tokens: number;
  entries: number;
  anchors: number;
  aliases: number;
}

/** Counts entries, depth, anchors and aliases of the syntax tree; throws at the first limit passed. */
function checkSyntaxTree(tokens: CST.Token[], file: string, lines: LineCounter): TreeStats {
  const stats: TreeStats = { tokens: 0, entries: 0, anchors: 0, aliases: 0 };
  const over = (problem: string, limit: string, max: number, offset: number): never => {
    throw new LimitExceededError(`${problem} in ${file}`, limit, max, { file, line: lines.linePos(offset).line });
  };
  const stack: { token: CST.Token; depth: number }[] = tokens.map((token) => ({ token, depth: 0 }));
  const push = (list: readonly CST.Token[] | undefined | null, depth: number) => {
    if (list) for (const token of list) stack.push({ token, depth });
  };
  while (stack.length > 0) {
    const { token, depth } = stack.pop() as { token: CST.Token; depth: number };
    if (++stats.tokens > MAX_YAML_TOKENS) over('Too many YAML tokens', 'MAX_YAML_TOKENS', MAX_YAML_TOKENS, token.offset);
    switch (token.type) {
      case 'anchor':
        if (++stats.anchors > MAX_YAML_ANCHORS) over('Too many YAML anchors', 'MAX_YAML_ANCHORS', MAX_YAML_ANCHORS, token.offset);
        break;
      case 'alias':
        if (++stats.aliases > MAX_YAML_ALIASES) over('Too many YAML aliases', 'MAX_YAML_ALIASES', MAX_YAML_ALIASES, token.offset);
        push(token.end, depth);
        break;
      case 'document':
        push(token.start, depth);
        if (token.value) push([token.value], depth);
        push(token.end, depth);
        break;
      case 'doc-end':
        push(token.end, depth);
        break;
      case 'block-scalar':
        push(token.props, depth);
        break;
      case 'block-map':
      case 'block-seq':
      case 'flow-collection': {
        const inner = depth + 1;
        if (inner > MAX_YAML_DEPTH) over('YAML nesting too deep', 'MAX_YAML_DEPTH', MAX_YAML_DEPTH, token.offset);
        for (const item of token.items as CST.CollectionItem[]) {
          if (++stats.entries > MAX_YAML_ENTRIES) over('Too many YAML entries', 'MAX_YAML_ENTRIES', MAX_YAML_ENTRIES, token.offset);
          push(item.start, inner);
          push(item.sep, inner);
          if (item.key) push([item.key], inner);
          if (item.value) push([item.value], inner);
        }
        if (token.type === 'flow-collection') push(token.end, inner);
        break;
      }
      case 'scalar':
      case 'single-quoted-scalar':
      case 'double-quoted-scalar':
        push(token.end, depth);
        break;
      default:
        break;
    }
  }
  return stats;
}

/** Keys must be unique within a mapping, as the `yaml` package requires by default; checked in linear time. */
function checkUniqueKeys(doc: Document, file: string, lines: LineCounter): void {
  const stack: unknown[] = [doc.contents];
  while (stack.length > 0) {
    const node = stack.pop();
    if (isMap(node)) {
      const seen = new Set<unknown>();
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? pair.key.value : pair.key;
        if (seen.has(key)) {
          const offset = isScalar(pair.key) && pair.key.range ? pair.key.range[0] : (node.range?.[0] ?? 0);
          throw syntaxError(file, 'Map keys must be unique', lines, offset);
        }
        seen.add(key);
        stack.push(pair.key, pair.value);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) stack.push(item);
    } else if (isPair(node)) {
      stack.push(node.key, node.value);
    }
  }
}

/**
 * With aliases, the data may hold the same object twice or hold itself. Walks it once, counting
 * every entry it reaches (repeats included) and refusing a value that contains itself.
 */
function checkExpanded(value: unknown, file: string): void {
  let entries = 0;
  const ancestors: object[] = [];
  const visit = (node: unknown): void => {
    if (typeof node !== 'object' || node === null) return;
    if (ancestors.includes(node)) {
      throw new YamlSyntaxError(file, 'an alias refers to a collection that contains it (the data would be infinite)');
    }
    if (ancestors.length >= MAX_YAML_DEPTH) {
      throw new LimitExceededError(`YAML nesting too deep once aliases are expanded in ${file}`, 'MAX_YAML_DEPTH', MAX_YAML_DEPTH, { file });
    }
    const children = node instanceof Map ? [...node.values()] : node instanceof Set ? [...node] : Object.values(node);
    ancestors.push(node);
    for (const child of children) {
      if (++entries > MAX_YAML_ENTRIES) {
        throw new LimitExceededError(`Too many YAML entries once aliases are expanded in ${file}`, 'MAX_YAML_ENTRIES', MAX_YAML_ENTRIES, { file });
      }
      visit(child);
    }
    ancestors.pop();
  };
  visit(value);
}

function syntaxError(file: string, message: string, lines: LineCounter, offset: number, cause?: unknown): YamlSyntaxError {
  const { line, col } = lines.linePos(offset);
  return new YamlSyntaxError(file, message.split('\n')[0], { line, column: col, ...(cause !== undefined ? { cause } : {}) });
}
