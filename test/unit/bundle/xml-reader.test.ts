/**
 * The tolerant XML reader on htmlparser2's tokenizer: line numbers in the whole file, the slips it
 * accepts, what it refuses and with which message, and where it stops reading.
 */
import { parseAgent } from '../../../bundle/agent-parser';
import { AgentParseError } from '../../../bundle/errors';
import { MAX_XML_ELEMENTS } from '../../../bundle/limits';
import { readElement, textOf, XmlLimitError, XmlSyntaxError, type XmlElement } from '../../../bundle/xml-reader';

/** Reads the first `<agent` of `text`. */
const readAgent = (text: string) => readElement(text, text.indexOf('<agent'));

function syntaxError(run: () => unknown): XmlSyntaxError {
  try {
    run();
  } catch (error) {
    if (error instanceof XmlSyntaxError) return error;
    throw error;
  }
  throw new Error('expected an XmlSyntaxError');
}

/** 300 lines of markdown, with HTML, a bare `&` and a `<` of its own, before the agent. */
const PREAMBLE = '# Notes\n\nSome <b>bold</b> prose & a < b.\n'.repeat(100);
const PREAMBLE_LINES = 300;

describe('xml-reader: line numbers count from the start of the whole file', () => {
  const agent = (eol: string) =>
    [
      '<agent name="N" title="T">', // PREAMBLE_LINES + 1
      '  <persona>',
      '    <role>R</role>',
      '    <identity>I', // + 4: never closed
      '  </persona>', // + 5
      '</agent>',
    ].join(eol);

  test('a mismatched close after a long preamble names both tags and both lines', () => {
    const error = syntaxError(() => readAgent(PREAMBLE + agent('\n')));
    expect(error.message).toBe(`unclosed tag <identity> (opened at line ${PREAMBLE_LINES + 4}, found </persona> at line ${PREAMBLE_LINES + 5}) (line ${PREAMBLE_LINES + 4})`);
    expect(error.line).toBe(PREAMBLE_LINES + 4);
  });

  test('CRLF line endings count the same lines and keep the text as written', () => {
    const crlf = (PREAMBLE + agent('\n')).replace(/\n/g, '\r\n');
    expect(syntaxError(() => readAgent(crlf)).line).toBe(PREAMBLE_LINES + 4);
    const ok = readAgent(crlf.replace('<identity>I', '<identity>I</identity>'));
    const persona = ok.children.find((c): c is XmlElement => typeof c !== 'string' && c.name === 'persona');
    expect(ok.line).toBe(PREAMBLE_LINES + 1);
    expect(persona?.line).toBe(PREAMBLE_LINES + 2);
    expect(persona?.children[0]).toBe('\r\n    ');
  });

  test('parseAgent reports the same line', () => {
    const error = (() => {
      try {
        return parseAgent(PREAMBLE + agent('\n'), 'agents/deep.md');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(AgentParseError);
    expect(error).toMatchObject({ line: PREAMBLE_LINES + 4 });
  });

  test('a stray closing tag deep in the file names itself, its parent and its line', () => {
    const text = `${PREAMBLE}<agent name="N" title="T">\n<persona>\n</role>\n</persona>\n</agent>`;
    expect(syntaxError(() => readAgent(text)).message).toBe(`unexpected closing tag </role> inside <persona> (line ${PREAMBLE_LINES + 3})`);
  });
});

describe('xml-reader: harmless slips are accepted', () => {
  test('a < in prose is text: before a space, a digit, =, -, < or at the end', () => {
    const el = readElement('<r>if a < b and c <= d, <3, a <- b, <<x>y</x> ok <</r>', 0);
    expect(el.children).toEqual(['if a < b and c <= d, <3, a <- b, <', { name: 'x', attrs: {}, children: ['y'], line: 1 }, ' ok <']);
  });

  test('a bare & and unknown entities stay as written; the five entities and numeric references are decoded', () => {
    const el = readElement('<r t="AT&T &amp; &#x1F600;">AT&T &amp; &nbsp; &copy; &#65;&#x42; &#0; &#65 & done</r>', 0);
    expect(el.attrs.t).toBe('AT&T & 😀');
    expect(el.children).toEqual(['AT&T & &nbsp; &copy; AB &#0; &#65 & done']);
  });

  test('CDATA text is kept as written (no entities, no tags) and joins the text around it', () => {
    const el = readElement('<r>a <![CDATA[x < y && <b>&amp;</b> ]]]> b</r>', 0);
    expect(el.children).toEqual(['a x < y && <b>&amp;</b> ] b']);
    expect(textOf(el)).toBe('a x < y && <b>&amp;</b> ] b');
  });

  test('comments, processing instructions and doctype are skipped; a close tag may have spaces', () => {
    const el = readElement('<r><?xml version="1.0"?><!DOCTYPE r><!-- <not> a tag -->t</r >', 0);
    expect(el.children).toEqual(['t']);
  });

  test("as htmlparser2 reads them: a processing instruction ends at its first >, </> is text, a close tag's name ends at a space", () => {
    expect(readElement('<r><?pi a > b?>t</r>', 0).children).toEqual([' b?>t']);
    expect(readElement('<r>a</>b</r>', 0).children).toEqual(['a</>b']);
    expect(readElement('<r>t</r junk>', 0).children).toEqual(['t']);
  });

  test('element names are read as before (letters, digits, _ . : -), so messages name the tag as written', () => {
    expect(readElement('<a.b-c:d_1 x="1"/>', 0)).toEqual({ name: 'a.b-c:d_1', attrs: { x: '1' }, children: [], line: 1 });
    // A TypeScript type in prose is a tag, named up to its comma.
    expect(syntaxError(() => readElement('<r>\nRecord<string, X>\n</r>', 0)).message).toBe('unclosed tag <string> (opened at line 2, found </r> at line 3) (line 2)');
  });

  test('reading stops at the first element end: what follows, however broken or long, is never read', () => {
    const tail = `\n</x> <unclosed & <!-- never ends ${'y'.repeat(1_000_000)}`;
    expect(readElement(`<a>t</a>${tail}`, 0)).toEqual({ name: 'a', attrs: {}, children: ['t'], line: 1 });
    expect(readElement(`<a k="v"/>${tail}`, 0)).toEqual({ name: 'a', attrs: { k: 'v' }, children: [], line: 1 });
  });

  test('text, names and values split across the reader chunks (16 KiB) read whole', () => {
    for (const shift of [0, 1, 2, 3, 5, 8]) {
      const pad = 'p'.repeat(16 * 1024 - 3 - shift);
      const el = readElement(`<r>${pad}&amp; a<3 <element-name attribute="v &lt; w">x</element-name></r>`, 0);
      expect(el.children).toEqual([`${pad}& a<3 `, { name: 'element-name', attrs: { attribute: 'v < w' }, children: ['x'], line: 1 }]);
    }
  });
});

describe('xml-reader: what loses structure is refused, with the line', () => {
  test.each([
    ['an unterminated start tag', '<a>\n<b c="1"', 'unclosed tag <b> (line 2)'],
    ['a start tag cut in its name', '<a>\n\n<bee', 'unclosed tag <bee> (line 3)'],
    ['an unclosed attribute value', '<a>\n<b c="1>text</b></a>', 'unclosed attribute value c in <b> (line 2)'],
    ['an unterminated closing tag', '<a>\n</a', 'unterminated closing tag (line 2)'],
    ['an unterminated closing tag with a space', '<a>\n</a  ', 'unterminated closing tag (line 2)'],
    ['an unclosed comment', '<a>\n<!-- x', 'unclosed comment (line 2)'],
    ['an unclosed CDATA section', '<a>\n\n<![CDATA[ x', 'unclosed CDATA section (line 3)'],
    ['an unclosed processing instruction', '<a>\n<?pi x', 'unclosed processing instruction (line 2)'],
    ['an unclosed declaration', '<a>\n<!DOCTYPE x', 'unclosed declaration (line 2)'],
    ['an element left open at the end', '<a>\n<b>\ntext', 'unclosed tag <b> (line 2)'],
    ['no start tag where reading begins', 'text <a></a>', 'expected a start tag (line 1)'],
  ])('%s', (_label, source, message) => {
    expect(syntaxError(() => readElement(source, 0)).message).toBe(message);
  });

  test(`more than MAX_XML_ELEMENTS (${MAX_XML_ELEMENTS}) elements is an XmlLimitError at the element's line`, () => {
    const ok = `<r>${'<i/>'.repeat(MAX_XML_ELEMENTS - 1)}</r>`;
    expect(readElement(ok, 0).children).toHaveLength(MAX_XML_ELEMENTS - 1);
    const error = syntaxError(() => readElement(`<r>\n${'<i/>\n'.repeat(MAX_XML_ELEMENTS)}</r>`, 0));
    expect(error).toBeInstanceOf(XmlLimitError);
    expect(error).toMatchObject({ limit: 'MAX_XML_ELEMENTS', max: MAX_XML_ELEMENTS, line: MAX_XML_ELEMENTS + 1 });
  });
});
