/**
 * A small, tolerant XML reader for agent files. Agent XML is a handful of elements with quoted
 * attributes and text; a full XML parser would reject real files for harmless slips (a bare `&`,
 * a `<` in prose), so this reader accepts those and fails only on what loses structure: unclosed
 * or mismatched tags, reported with their line numbers.
 *
 * Accepted: elements, attributes (double, single or no quotes; bare attributes get ""), text,
 * comments, CDATA, processing instructions and doctype (skipped). The entities `&lt; &gt; &amp;
 * &quot; &apos;` and numeric references are decoded; any other `&` stays as written. A `<` not
 * followed by a tag name, `/`, `!` or `?` is text.
 *
 * Reading is iterative and linear in the length of the source; nesting deeper than
 * `MAX_XML_DEPTH` or more than `MAX_XML_ELEMENTS` elements stop it with `XmlLimitError`, so the
 * tree it returns is safe to walk recursively.
 */
import { MAX_XML_DEPTH, MAX_XML_ELEMENTS } from './limits';

/** An element: name, attributes, children in document order, and the 1-based line of its start tag. */
export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlNode[];
  line: number;
}

/** A child node: an element or a run of (decoded) text. */
export type XmlNode = XmlElement | string;

/** A structural problem, with the 1-based line where it was found. */
export class XmlSyntaxError extends Error {
  constructor(
    readonly problem: string,
    readonly line: number,
  ) {
    super(`${problem} (line ${line})`);
    this.name = 'XmlSyntaxError';
  }
}

/** The reader met more structure than its limits allow (see `limits.ts`). */
export class XmlLimitError extends XmlSyntaxError {
  constructor(
    problem: string,
    line: number,
    readonly limit: string,
    readonly max: number,
  ) {
    super(problem, line);
    this.name = 'XmlLimitError';
  }
}

const NAME_START = /[A-Za-z_]/;
const NAME = /[A-Za-z0-9_.:-]/;

/**
 * Reads the element that starts at `start` in `source` (which must point at its `<`) and returns it
 * once its closing tag is found; whatever follows is ignored. Line numbers count from the start of
 * `source`, so errors point at the right line of the whole file.
 */
export function readElement(source: string, start: number): XmlElement {
  return new Reader(source, start).root();
}

/** The text of a node and all its descendants, concatenated. */
export function textOf(node: XmlNode): string {
  if (typeof node === 'string') return node;
  return node.children.map(textOf).join('');
}

/** The direct child elements of `el`, optionally only those with the given name(s). */
export function childElements(el: XmlElement, ...names: string[]): XmlElement[] {
  return el.children.filter(
    (c): c is XmlElement => typeof c !== 'string' && (names.length === 0 || names.includes(c.name)),
  );
}

/** The first direct child element with one of the given names. */
export function firstChild(el: XmlElement, ...names: string[]): XmlElement | undefined {
  return childElements(el, ...names)[0];
}

/** Decodes the five XML entities and numeric character references; leaves any other `&` alone. */
export function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(lt|gt|amp|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);/g, (whole, entity: string) => {
    switch (entity) {
      case 'lt':
        return '<';
      case 'gt':
        return '>';
      case 'amp':
        return '&';
      case 'quot':
        return '"';
      case 'apos':
        return "'";
    }
    const code = entity.startsWith('#x') ? parseInt(entity.slice(2), 16) : parseInt(entity.slice(1), 10);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

class Reader {
  private pos: number;
  private readonly lineStarts: number[] = [0];
  private elements = 0;

  constructor(
    private readonly src: string,
    start: number,
  ) {
    this.pos = start;
    for (let i = 0; i < src.length; i++) if (src.charCodeAt(i) === 10) this.lineStarts.push(i + 1);
  }

  root(): XmlElement {
    const first = this.startTag();
    if (first.selfClosing) return first.element;
    const stack: XmlElement[] = [first.element];
    while (stack.length > 0) {
      const parent = stack[stack.length - 1];
      if (this.pos >= this.src.length) {
        throw new XmlSyntaxError(`unclosed tag <${parent.name}>`, parent.line);
      }
      const lt = this.src.indexOf('<', this.pos);
      if (lt === -1) {
        this.pos = this.src.length;
        continue;
      }
      if (lt > this.pos) this.addText(parent, this.src.slice(this.pos, lt));
      this.pos = lt;
      if (this.src.startsWith('<!--', lt)) {
        this.pos = this.skipPast('-->', 'unclosed comment');
      } else if (this.src.startsWith('<![CDATA[', lt)) {
        const end = this.src.indexOf(']]>', lt + 9);
        if (end === -1) throw new XmlSyntaxError('unclosed CDATA section', this.lineAt(lt));
        this.addRawText(parent, this.src.slice(lt + 9, end));
        this.pos = end + 3;
      } else if (this.src.startsWith('<?', lt)) {
        this.pos = this.skipPast('?>', 'unclosed processing instruction');
      } else if (this.src.startsWith('<!', lt)) {
        this.pos = this.skipPast('>', 'unclosed declaration');
      } else if (this.src.startsWith('</', lt)) {
        this.closeTag(stack);
      } else if (NAME_START.test(this.src.charAt(lt + 1))) {
        const { element, selfClosing } = this.startTag();
        parent.children.push(element);
        if (!selfClosing) {
          if (stack.length >= MAX_XML_DEPTH) {
            throw new XmlLimitError(`elements nested more than ${MAX_XML_DEPTH} deep`, element.line, 'MAX_XML_DEPTH', MAX_XML_DEPTH);
          }
          stack.push(element);
        }
      } else {
        // A lone `<` in prose ("a < b"): keep it as text.
        this.addText(parent, '<');
        this.pos = lt + 1;
      }
    }
    return first.element;
  }

  private closeTag(stack: XmlElement[]): void {
    const at = this.pos;
    const end = this.src.indexOf('>', at);
    if (end === -1) throw new XmlSyntaxError('unterminated closing tag', this.lineAt(at));
    const name = this.src.slice(at + 2, end).trim();
    this.pos = end + 1;
    const top = stack[stack.length - 1];
    if (top.name === name) {
      stack.pop();
      return;
    }
    const open = stack.map((el) => el.name).lastIndexOf(name);
    if (open === -1) {
      throw new XmlSyntaxError(`unexpected closing tag </${name}> inside <${top.name}>`, this.lineAt(at));
    }
    // `</a>` while `<b>` (inside `<a>`) is open: `<b>` was never closed.
    throw new XmlSyntaxError(
      `unclosed tag <${top.name}> (opened at line ${top.line}, found </${name}> at line ${this.lineAt(at)})`,
      top.line,
    );
  }

  private startTag(): { element: XmlElement; selfClosing: boolean } {
    const at = this.pos;
    const line = this.lineAt(at);
    if (++this.elements > MAX_XML_ELEMENTS) {
      throw new XmlLimitError(`more than ${MAX_XML_ELEMENTS} elements`, line, 'MAX_XML_ELEMENTS', MAX_XML_ELEMENTS);
    }
    let i = at + 1;
    while (i < this.src.length && NAME.test(this.src.charAt(i))) i++;
    const name = this.src.slice(at + 1, i);
    const attrs: Record<string, string> = {};
    for (;;) {
      while (i < this.src.length && /\s/.test(this.src.charAt(i))) i++;
      if (i >= this.src.length) throw new XmlSyntaxError(`unclosed tag <${name}>`, line);
      const ch = this.src.charAt(i);
      if (ch === '>') {
        this.pos = i + 1;
        return { element: { name, attrs, children: [], line }, selfClosing: false };
      }
      if (ch === '/' && this.src.charAt(i + 1) === '>') {
        this.pos = i + 2;
        return { element: { name, attrs, children: [], line }, selfClosing: true };
      }
      const nameStart = i;
      while (i < this.src.length && !/[\s=>]/.test(this.src.charAt(i)) && !this.src.startsWith('/>', i)) i++;
      const attrName = this.src.slice(nameStart, i);
      if (attrName === '') {
        // A stray character (e.g. a lone `/`): skip it rather than loop.
        i++;
        continue;
      }
      while (i < this.src.length && /\s/.test(this.src.charAt(i))) i++;
      if (this.src.charAt(i) !== '=') {
        attrs[attrName] = '';
        continue;
      }
      i++;
      while (i < this.src.length && /\s/.test(this.src.charAt(i))) i++;
      const quote = this.src.charAt(i);
      if (quote === '"' || quote === "'") {
        const close = this.src.indexOf(quote, i + 1);
        if (close === -1) throw new XmlSyntaxError(`unclosed attribute value ${attrName} in <${name}>`, line);
        attrs[attrName] = decodeEntities(this.src.slice(i + 1, close));
        i = close + 1;
      } else {
        const valueStart = i;
        while (i < this.src.length && !/[\s>]/.test(this.src.charAt(i))) i++;
        attrs[attrName] = decodeEntities(this.src.slice(valueStart, i));
      }
    }
  }

  private addText(parent: XmlElement, raw: string): void {
    this.addRawText(parent, decodeEntities(raw));
  }

  private addRawText(parent: XmlElement, text: string): void {
    const last = parent.children[parent.children.length - 1];
    if (typeof last === 'string') parent.children[parent.children.length - 1] = last + text;
    else parent.children.push(text);
  }

  private skipPast(terminator: string, problem: string): number {
    const end = this.src.indexOf(terminator, this.pos);
    if (end === -1) throw new XmlSyntaxError(problem, this.lineAt(this.pos));
    return end + terminator.length;
  }

  /** 1-based line of an offset (binary search over line starts). */
  lineAt(offset: number): number {
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lineStarts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  }
}
