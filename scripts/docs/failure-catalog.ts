/**
 * Finds every typed error of the code, as declared: the failure `type` strings (exported string
 * constants such as `BUSY = 'LoopwrightBusy'` in common/failure-types.ts and beside the code that
 * raises them, and the types given inline to `ApplicationFailure` or in a `--json` failure), and
 * every exported error class (whose name is the failure type a worker or the command line reports).
 * Each comes with where it is declared and its TSDoc, read with the TypeScript compiler.
 *
 * scripts/docs/troubleshooting-doc.ts turns them into docs/troubleshooting.md.
 */
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/** The folders whose code raises the errors users meet (tests and scripts do not). */
export const SOURCE_FOLDERS = ['common', 'bundle', 'codec', 'fake-model', 'activities', 'workflows', 'worker', 'client', 'serve', 'cli'];

const ROOT = path.join(__dirname, '..', '..');

/** One typed error as the code declares it. */
export interface DeclaredFailure {
  /** The failure type users see: `LoopwrightBusy`, `ModelRateLimited`, `SecurityViolationError`. */
  type: string;
  /** How it is declared: a failure type string, or an error class (and the class it extends). */
  kind: 'type' | 'class';
  extendsName?: string;
  /** The file (relative to the repository) and line of the declaration. */
  file: string;
  line: number;
  /** Its TSDoc, as one paragraph; empty when it has none. */
  doc: string;
}

/** Every typed error declared in the source folders, each type once (the first declaration found), sorted by type. */
export function declaredFailures(root = ROOT): DeclaredFailure[] {
  const found = new Map<string, DeclaredFailure>();
  for (const file of sourceFiles(root)) {
    const text = fs.readFileSync(path.join(root, file), 'utf8');
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
    for (const failure of failuresIn(source, file)) if (!found.has(failure.type)) found.set(failure.type, failure);
  }
  const classes = new Set([...found.values()].filter((f) => f.kind === 'class').map((f) => f.type));
  // Only classes that are errors: extending Error, or (transitively) another error class found here.
  const isError = (f: DeclaredFailure, seen = new Set<string>()): boolean => {
    if (f.kind === 'type') return true;
    if (f.extendsName === 'Error') return true;
    if (!f.extendsName || !classes.has(f.extendsName) || seen.has(f.type)) return false;
    seen.add(f.type);
    return isError(found.get(f.extendsName)!, seen);
  };
  return [...found.values()].filter((f) => isError(f)).sort((a, b) => a.type.localeCompare(b.type));
}

/** The TypeScript files of the source folders, relative to `root`, in a stable order. */
function sourceFiles(root: string): string[] {
  const files: string[] = [];
  const walk = (folder: string): void => {
    for (const entry of fs.readdirSync(path.join(root, folder), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const at = path.posix.join(folder, entry.name);
      if (entry.isDirectory()) walk(at);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) files.push(at);
    }
  };
  for (const folder of SOURCE_FOLDERS) if (fs.existsSync(path.join(root, folder))) walk(folder);
  return files;
}

/** A failure type: a word in PascalCase (`LoopwrightBusy`, `UsageError`). */
const FAILURE_TYPE = /^[A-Z][a-z]+(?:[A-Z][a-z0-9]*)+$/;

/** The failures one file declares or raises inline. */
function failuresIn(source: ts.SourceFile, file: string): DeclaredFailure[] {
  const out: DeclaredFailure[] = [];
  const at = (node: ts.Node): number => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const visit = (node: ts.Node): void => {
    // export const BUSY = 'LoopwrightBusy';
    if (ts.isVariableStatement(node) && isExported(node)) {
      for (const declaration of node.declarationList.declarations) {
        const value = declaration.initializer;
        if (value && ts.isStringLiteral(value) && FAILURE_TYPE.test(value.text)) {
          out.push({ type: value.text, kind: 'type', file, line: at(node), doc: docOf(node, source) });
        }
      }
    }
    // export class SecurityViolationError extends BundleError { ... }
    if (ts.isClassDeclaration(node) && node.name && isExported(node)) {
      const heritage = node.heritageClauses?.find((clause) => clause.token === ts.SyntaxKind.ExtendsKeyword)?.types[0];
      if (heritage) out.push({ type: node.name.text, kind: 'class', extendsName: heritage.expression.getText(source), file, line: at(node), doc: docOf(node, source) });
    }
    // ApplicationFailure.nonRetryable('message', 'LoopwrightWorkerMisconfigured')
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.expression.getText(source) === 'ApplicationFailure') {
      const typeArg = node.arguments[1];
      if (typeArg && ts.isStringLiteral(typeArg) && FAILURE_TYPE.test(typeArg.text)) out.push({ type: typeArg.text, kind: 'type', file, line: at(node), doc: '' });
    }
    // { error: ..., type: 'BundleNotFound' } in a command's --json failure; { code: 'LoopwrightRewound' } in an event.
    if (ts.isPropertyAssignment(node) && ts.isIdentifier(node.name) && (node.name.text === 'type' || node.name.text === 'code')) {
      for (const value of stringValues(node.initializer)) {
        const isFailure = node.name.text === 'type' ? FAILURE_TYPE.test(value) && hasErrorSibling(node) : /^Loopwright[A-Z]/.test(value);
        if (isFailure) out.push({ type: value, kind: 'type', file, line: at(node), doc: '' });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** The strings an expression may be: a literal, or either branch of `a ? 'X' : 'Y'`. */
function stringValues(node: ts.Expression): string[] {
  if (ts.isStringLiteral(node)) return [node.text];
  if (ts.isConditionalExpression(node)) return [...stringValues(node.whenTrue), ...stringValues(node.whenFalse)];
  return [];
}

/** `{ error: ..., type: 'X' }` or `{ message, type: 'X' }`: a failure object (not a tool's kind or an event's type). */
function hasErrorSibling(node: ts.PropertyAssignment): boolean {
  const literal = node.parent;
  const names = ['error', 'message'];
  return ts.isObjectLiteralExpression(literal) && literal.properties.some((p) => p.name !== undefined && ts.isIdentifier(p.name) && names.includes(p.name.text));
}

function isExported(node: ts.Node): boolean {
  return (ts.getCombinedModifierFlags(node as ts.Declaration) & ts.ModifierFlags.Export) !== 0;
}

/** The TSDoc block right before a declaration, as one paragraph of text (tags and `{@link}` made plain). */
function docOf(node: ts.Node, source: ts.SourceFile): string {
  const ranges = ts.getLeadingCommentRanges(source.text, node.getFullStart()) ?? [];
  const last = ranges.filter((range) => source.text.startsWith('/**', range.pos)).pop();
  if (!last) return '';
  return source.text
    .slice(last.pos + 3, last.end - 2)
    .split('\n')
    .map((line) => line.replace(/^\s*\*\s?/, '').trim())
    .join(' ')
    .replace(/\{@link\s+([^}\s]+)\s*\}/g, '`$1`')
    .replace(/\s+/g, ' ')
    .trim();
}
