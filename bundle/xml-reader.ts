/**
 * A tolerant XML reader for agent files. Agent XML is a handful of elements with quoted attributes
 * and text; a strict XML parser would reject real files for harmless slips (a bare `&`, a `<` in
 * prose), so this reader accepts those and fails only on what loses structure: unclosed or
 * mismatched tags, reported with their line numbers.
 *
 * Accepted: elements, attributes (double, single or no quotes; bare attributes get ""), text,
 * comments, CDATA (its text kept as written), processing instructions and doctype (skipped). The
 * entities `&lt; &gt; &amp; &quot; &apos;` and numeric references are decoded; any other `&` stays
 * as written. A `<` not followed by a letter, `_`, `/`, `!` or `?` is text. As htmlparser2 reads
 * them: a processing instruction ends at its first `>`, a closing tag's name at a space, and `</>`
 * is text.
 *
 * Reading is linear in the length of the element read (the rest of the file is never looked at);
 * nesting deeper than `MAX_XML_DEPTH` or more than `MAX_XML_ELEMENTS` elements stop it with
 * `XmlLimitError`, so the tree it returns is safe to walk recursively.
 */
// Tokenizing is htmlparser2's (XML mode): a maintained, streaming, linear-time tokenizer that tolerates the slips above.
import { QuoteType, Tokenizer, type TokenizerCallbacks } from 'htmlparser2';
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

/**
 * Reads the element that starts at `start` in `source` (which must point at its `<`) and returns it
 * once its closing tag is found; whatever follows is ignored. Line numbers count from the start of
 * `source`, so errors point at the right line of the whole file.
 */
export function readElement(source: string, start: number): XmlElement {
  return new ElementReader(source, start).read();
}

/** The text of a node and all its descendants, concatenated. */
export function textOf(node: XmlNode): string {
  if (typeof node === 'string') return node;
  return node.children.map(textOf).join('');
}

/** The direct child elements of `el`, optionally only those with the given name(s). */
export function childElements(el: XmlElement, ...names: string[]): XmlElement[] {
  return el.children.filter((c): c is XmlElement => typeof c !== 'string' && (names.length === 0 || names.includes(c.name)));
}

/** The first direct child element with one of the given names. */
export function firstChild(el: XmlElement, ...names: string[]): XmlElement | undefined {
  return childElements(el, ...names)[0];
}

/**
 * Decodes the five XML entities and numeric character references; leaves any other `&` alone.
 * (Ours, not htmlparser2's: that one turns `&#0;` and out-of-range references into U+FFFD and
 * `&#128;`–`&#159;` into Windows-1252 characters, as HTML does.)
 */
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

/** How much of the source the tokenizer is given at a time (reading stops at the element's end). */
const CHUNK_CHARS = 16 * 1024;
/** A `<` that starts no markup by our rules (htmlparser2's XML mode would open a tag at `<3` or `<=`). */
const PROSE_LT = /<(?![A-Za-z_/!?])/g;
const NAME = /[A-Za-z_][A-Za-z0-9_.:-]*/y;
const TO_QUOTED_VALUE = /\s*=\s*["']/y;

/** The start tag being read: its element and the attribute in progress. */
interface OpenTag {
  element: XmlElement;
  attr?: { name: string; nameEnd: number; value: string };
}

/**
 * Builds the tree from the tokenizer's events, which carry offsets into what it was given (the
 * source from `start`): names, text and values are sliced from the source itself, undecoded (the
 * tokenizer runs with `decodeEntities: false`), and decoded here. The tokenizer's `Parser` is not
 * used: in XML mode it drops a closing tag that matches no open element without a word.
 */
class ElementReader implements TokenizerCallbacks {
  private readonly tokenizer = new Tokenizer({ xmlMode: true, decodeEntities: false }, this);
  private readonly lines: LineTable;
  private root: XmlElement | undefined;
  private readonly stack: XmlElement[] = [];
  private tag: OpenTag | undefined;
  private text = '';
  private elements = 0;
  private done = false;
  /** Offset just past the last complete token: where an unfinished one begins. */
  private resumeAt: number;

  constructor(
    private readonly src: string,
    private readonly start: number,
  ) {
    this.lines = new LineTable(src);
    this.resumeAt = start;
  }

  read(): XmlElement {
    NAME.lastIndex = this.start + 1;
    if (this.src.charAt(this.start) !== '<' || !NAME.test(this.src)) {
      throw new XmlSyntaxError('expected a start tag', this.lines.lineAt(this.start));
    }
    for (let from = this.start; !this.done && from < this.src.length; from += CHUNK_CHARS) {
      const to = Math.min(from + CHUNK_CHARS, this.src.length);
      // Same length, so offsets hold: a prose `<` becomes `_` for the tokenizer only.
      this.tokenizer.write(
        this.src
          .slice(from, to + 1)
          .replace(PROSE_LT, '_')
          .slice(0, to - from),
      );
    }
    if (!this.done || !this.root) this.failAtEnd();
    return this.root as XmlElement;
  }

  // Tokenizer events. Offsets are relative to `start`.

  ontext(start: number, end: number): void {
    this.text += this.slice(start, end);
    this.resumeAt = this.start + end;
  }

  onopentagname(start: number, end: number): void {
    this.flushText();
    const line = this.lines.lineAt(this.start + start - 1);
    if (++this.elements > MAX_XML_ELEMENTS) {
      throw new XmlLimitError(`more than ${MAX_XML_ELEMENTS} elements`, line, 'MAX_XML_ELEMENTS', MAX_XML_ELEMENTS);
    }
    // The name is what our rules read as one (the tokenizer's runs to whitespace, `/` or `>`).
    NAME.lastIndex = this.start + start;
    const name = NAME.test(this.src) ? this.src.slice(this.start + start, Math.min(NAME.lastIndex, this.start + end)) : this.slice(start, end);
    this.tag = { element: { name, attrs: {}, children: [], line } };
  }

  onattribname(start: number, end: number): void {
    if (this.tag) this.tag.attr = { name: this.slice(start, end), nameEnd: this.start + end, value: '' };
  }

  onattribdata(start: number, end: number): void {
    if (this.tag?.attr) this.tag.attr.value += this.slice(start, end);
  }

  onattribend(quote: QuoteType): void {
    const attr = this.tag?.attr;
    if (!this.tag || !attr) return;
    this.tag.element.attrs[attr.name] = quote === QuoteType.NoValue ? '' : decodeEntities(attr.value);
    this.tag.attr = undefined;
  }

  onopentagend(end: number): void {
    this.openElement(false, end);
  }

  onselfclosingtag(end: number): void {
    this.openElement(true, end);
  }

  onclosetag(start: number, end: number): void {
    this.flushText();
    const at = this.src.lastIndexOf('<', this.start + start);
    const line = this.lines.lineAt(at);
    const gt = this.src.indexOf('>', this.start + end);
    if (gt === -1) throw new XmlSyntaxError('unterminated closing tag', line);
    this.resumeAt = gt + 1;
    const name = this.slice(start, end);
    const top = this.stack[this.stack.length - 1];
    if (top.name === name) {
      this.stack.pop();
      if (this.stack.length === 0) this.finish();
      return;
    }
    const open = this.stack.map((el) => el.name).lastIndexOf(name);
    if (open === -1) throw new XmlSyntaxError(`unexpected closing tag </${name}> inside <${top.name}>`, line);
    // `</a>` while `<b>` (inside `<a>`) is open: `<b>` was never closed.
    throw new XmlSyntaxError(`unclosed tag <${top.name}> (opened at line ${top.line}, found </${name}> at line ${line})`, top.line);
  }

  oncdata(start: number, end: number, endOffset: number): void {
    this.flushText();
    this.addText(this.slice(start, end - endOffset));
    this.resumeAt = this.start + end + 1;
  }

  oncomment(_start: number, end: number): void {
    this.skipped(end);
  }

  ondeclaration(_start: number, end: number): void {
    this.skipped(end);
  }

  onprocessinginstruction(_start: number, end: number): void {
    this.skipped(end);
  }

  // Not called: entities are decoded here, and the tokenizer is never ended (see `failAtEnd`).
  ontextentity(): void {}
  onattribentity(): void {}
  onend(): void {}

  private openElement(selfClosing: boolean, end: number): void {
    const element = this.tag?.element;
    if (!element) return;
    this.tag = undefined;
    this.resumeAt = this.start + end + 1;
    if (!this.root) {
      this.root = element;
    } else {
      this.stack[this.stack.length - 1].children.push(element);
      if (!selfClosing && this.stack.length >= MAX_XML_DEPTH) {
        throw new XmlLimitError(`elements nested more than ${MAX_XML_DEPTH} deep`, element.line, 'MAX_XML_DEPTH', MAX_XML_DEPTH);
      }
    }
    if (!selfClosing) this.stack.push(element);
    else if (element === this.root) this.finish();
  }

  /** The first element is closed: stop reading. */
  private finish(): void {
    this.done = true;
    this.tokenizer.pause();
  }

  private skipped(end: number): void {
    this.flushText();
    this.resumeAt = this.start + end + 1;
  }

  /** The source ended inside the element: name what was left open. */
  private failAtEnd(): never {
    const { src } = this;
    const tag = this.tag;
    if (tag) {
      TO_QUOTED_VALUE.lastIndex = tag.attr?.nameEnd ?? 0;
      if (tag.attr && TO_QUOTED_VALUE.test(src)) {
        throw new XmlSyntaxError(`unclosed attribute value ${tag.attr.name} in <${tag.element.name}>`, tag.element.line);
      }
      throw new XmlSyntaxError(`unclosed tag <${tag.element.name}>`, tag.element.line);
    }
    const at = this.resumeAt;
    const line = this.lines.lineAt(at);
    if (src.startsWith('<!--', at)) throw new XmlSyntaxError('unclosed comment', line);
    if (src.startsWith('<![CDATA[', at)) throw new XmlSyntaxError('unclosed CDATA section', line);
    if (src.startsWith('<?', at)) throw new XmlSyntaxError('unclosed processing instruction', line);
    if (src.startsWith('<!', at)) throw new XmlSyntaxError('unclosed declaration', line);
    if (src.startsWith('</', at) && !src.includes('>', at)) throw new XmlSyntaxError('unterminated closing tag', line);
    NAME.lastIndex = at + 1;
    if (src.charAt(at) === '<' && NAME.test(src)) {
      throw new XmlSyntaxError(`unclosed tag <${src.slice(at + 1, NAME.lastIndex)}>`, line);
    }
    const top = this.stack[this.stack.length - 1];
    throw new XmlSyntaxError(`unclosed tag <${top.name}>`, top.line);
  }

  private flushText(): void {
    if (this.text === '') return;
    this.addText(decodeEntities(this.text));
    this.text = '';
  }

  private addText(text: string): void {
    const children = this.stack[this.stack.length - 1].children;
    const last = children[children.length - 1];
    if (typeof last === 'string') children[children.length - 1] = last + text;
    else children.push(text);
  }

  private slice(start: number, end: number): string {
    return this.src.slice(this.start + start, this.start + end);
  }
}

/** 1-based line numbers of offsets: line starts are indexed as far as asked, then binary-searched. */
class LineTable {
  private readonly starts = [0];
  private indexed = 0;

  constructor(private readonly src: string) {}

  lineAt(offset: number): number {
    for (; this.indexed < offset && this.indexed < this.src.length; this.indexed++) {
      if (this.src.charCodeAt(this.indexed) === 10) this.starts.push(this.indexed + 1);
    }
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  }
}
