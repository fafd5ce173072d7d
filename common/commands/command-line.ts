/**
 * A shell command line as the command rules read it (command-rules.ts): the simple commands it is
 * made of, whether anything in it is beyond what rules can judge, and the line with the session's
 * path variables filled in as `run_command` fills them. A reading, not a shell: it knows quotes,
 * backslashes and the control operators, and calls anything cleverer opaque. Pure functions with
 * no imports: workflow code uses them.
 */

/** What `readCommandLine` makes of a line. */
export interface CommandLineReading {
  /**
   * The simple commands between the control operators (`;`, `&&`, `||`, `|`, `|&`, `&`, a line
   * break), white space outside quotes collapsed to one space, quotes kept as written, and the
   * redirections that touch no file (`2>&1`, `>&2`, `>/dev/null`, `2>/dev/null`) left out.
   */
  parts: string[];
  /**
   * Why the line is beyond the rules, when it is: a command substitution (`$(...)`, backticks), a
   * subshell or group in parentheses, a redirection to or from a file, a here-document, a comment,
   * an unclosed quote. Such a line never runs on an allow rule; it waits for a person.
   */
  opaque?: string;
  /**
   * For deny rules: every simple command that may run, those inside substitutions and parentheses
   * too, with quotes and backslashes removed.
   */
  runs: string[];
}

/** Characters that end a simple command outside quotes. */
const OPERATORS = new Set([';', '&', '|', '\n']);

/**
 * Reads `line` (see `CommandLineReading`). Linear in the line's length. Only single quotes hide
 * everything; inside double quotes `$(` and backticks still run, so they make the line opaque there too.
 */
export function readCommandLine(line: string): CommandLineReading {
  const parts: string[] = [];
  let opaque: string | undefined;
  const beyond = (why: string): void => {
    opaque ??= why;
  };
  let current = '';
  const space = (): void => {
    if (current !== '' && !current.endsWith(' ')) current += ' ';
  };
  const endPart = (): void => {
    const part = current.trim();
    if (part !== '') parts.push(part);
    current = '';
  };
  let i = 0;
  while (i < line.length) {
    const c = line[i]!;
    const next = line[i + 1];
    if (c === '\\') {
      // A backslash before a line break joins the lines; before anything else it takes that character literally.
      if (next === '\n') space();
      else current += next === undefined ? c : c + next;
      i += 2;
      continue;
    }
    if (c === '$' && next === "'") {
      // ANSI-C quoting: a backslash escapes the next character, a quote included.
      let j = i + 2;
      while (j < line.length && line[j] !== "'") j += line[j] === '\\' ? 2 : 1;
      if (j >= line.length) {
        beyond('an unclosed quote');
        current += line.slice(i);
        break;
      }
      current += line.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (c === "'") {
      const close = line.indexOf("'", i + 1);
      if (close < 0) {
        beyond('an unclosed quote');
        current += line.slice(i);
        break;
      }
      current += line.slice(i, close + 1);
      i = close + 1;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      while (j < line.length && line[j] !== '"') {
        if (line[j] === '\\') j += 1;
        else if (line[j] === '`' || (line[j] === '$' && line[j + 1] === '(')) beyond('a command substitution');
        j += 1;
      }
      if (j >= line.length) {
        beyond('an unclosed quote');
        current += line.slice(i);
        break;
      }
      current += line.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (c === ' ' || c === '\t') {
      space();
      i += 1;
      continue;
    }
    if (OPERATORS.has(c)) {
      // `&>file` and `>&2` are redirections, read below; `&` and `|` alone or doubled end the command.
      if (c === '&' && next === '>') {
        i = redirection(line, i, current, (kept, harmless) => {
          current = kept;
          if (!harmless) beyond('a redirection to a file');
        });
        continue;
      }
      endPart();
      i += 1;
      while (i < line.length && (line[i] === '&' || line[i] === '|' || line[i] === ';') && line[i - 1] === line[i]) i += 1;
      if (c === '|' && line[i] === '&') i += 1;
      continue;
    }
    if (c === '`' || (c === '$' && next === '(')) {
      beyond('a command substitution');
      current += c;
      i += 1;
      continue;
    }
    if (c === '(' || c === ')') {
      beyond('a subshell or group in parentheses');
      current += c;
      i += 1;
      continue;
    }
    if (c === '#' && (current === '' || current.endsWith(' '))) {
      beyond('a comment');
      current += c;
      i += 1;
      continue;
    }
    if (c === '>' || c === '<') {
      if (c === '<' && next === '<') beyond('a here-document');
      i = redirection(line, i, current, (kept, harmless) => {
        current = kept;
        if (!harmless) beyond(c === '<' ? 'a redirection from a file' : 'a redirection to a file');
      });
      continue;
    }
    current += c;
    i += 1;
  }
  endPart();
  return { parts, ...(opaque !== undefined ? { opaque } : {}), runs: runsOf(line) };
}

/**
 * Reads the redirection at `line[at]` (`>`, `>>`, `<`, `&>`, with a file descriptor before it in
 * `current`): a harmless one (`2>&1`, `>&2`, `2>/dev/null`, `&>/dev/null`) is dropped from the
 * command, any other is kept as written. Returns where reading goes on.
 */
function redirection(line: string, at: number, current: string, done: (current: string, harmless: boolean) => void): number {
  let i = at;
  if (line[i] === '&') i += 1;
  const op = line[i]!;
  i += 1;
  if (line[i] === op || (op === '>' && line[i] === '|')) i += 1;
  // `2>&1`, `>&-`: a duplication of a file descriptor.
  const dup = line[i] === '&' ? /^&(\d+|-)/.exec(line.slice(i)) : null;
  let target: string;
  let end: number;
  if (dup) {
    target = dup[0];
    end = i + dup[0].length;
  } else {
    let j = i;
    while (line[j] === ' ' || line[j] === '\t') j += 1;
    const word = /^[^\s;&|<>()`'"$\\]*/.exec(line.slice(j))![0];
    target = word;
    end = j + word.length;
  }
  // A file descriptor before it is a word of digits alone (`2>`; `a2>` redirects the output of a command with the argument `a2`).
  const fd = /(?:^| )(\d+)$/.exec(current)?.[1] ?? '';
  const harmless = dup !== null || (op === '>' && target === '/dev/null');
  if (harmless) {
    done(current.slice(0, current.length - fd.length), true);
    return end;
  }
  done(current + line.slice(at, i), false);
  return i;
}

/** Words that run the command after them (and their options), for deny rules. */
const WRAPPERS = new Set(['!', '{', '}', 'if', 'then', 'else', 'elif', 'do', 'while', 'until', 'time', 'exec', 'command', 'builtin', 'nohup', 'nice', 'env', 'sudo', 'doas', 'xargs', 'timeout']);

/**
 * Every simple command of `line` that may run, for deny rules: split at the control operators, at
 * parentheses and braces, and at substitutions (in double quotes too), quotes and backslashes removed.
 */
function runsOf(line: string): string[] {
  const runs: string[] = [];
  let current = '';
  const end = (): void => {
    const run = current.replace(/\s+/g, ' ').trim();
    if (run !== '') runs.push(run);
    current = '';
  };
  // The quote the reading is in: single, double, or ANSI-C (`$'...'`, where a backslash escapes).
  let quote: "'" | '"' | "$'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === '\\' && quote !== "'") {
      current += line[i + 1] ?? '';
      i += 1;
    } else if (quote === "'" || quote === "$'") {
      if (c === "'") quote = undefined;
      else current += c;
    } else if (c === '$' && line[i + 1] === "'" && quote === undefined) {
      quote = "$'";
      i += 1;
    } else if (c === "'" && quote === undefined) {
      quote = c;
    } else if (c === '"') {
      quote = quote === '"' ? undefined : '"';
    } else if (c === '&' && quote === undefined && (line[i - 1] === '>' || line[i - 1] === '<' || line[i + 1] === '>')) {
      // `2>&1`, `&>file`: a redirection, not the end of a command.
      current += c;
    } else if (c === '`' || (quote === undefined && (OPERATORS.has(c) || '(){}'.includes(c)))) {
      end();
    } else if (c === '$' && line[i + 1] === '(') {
      end();
      i += 1;
    } else {
      current += c;
    }
  }
  end();
  return runs;
}

/**
 * The forms of a run a deny rule is also compared with: without the assignments and wrappers
 * before the command (`FOO=1 sudo -E rm -rf x`: `rm -rf x`), and with a path to the command cut to
 * its name (`/bin/rm -rf x`: `rm -rf x`).
 */
export function runForms(run: string): string[] {
  const words = run.split(' ');
  let k = 0;
  while (k < words.length && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[k]!) || WRAPPERS.has(words[k]!))) {
    k += 1;
    // A wrapper's options (`sudo -E`, `nice -n`), and a number after them (`nice -n 5`, `timeout 10`).
    while (k < words.length && /^-/.test(words[k]!)) k += 1;
    while (k < words.length && /^\d+[smhd]?$/.test(words[k]!)) k += 1;
  }
  const bare = words.slice(k);
  const forms = [run];
  if (bare.length > 0 && k > 0) forms.push(bare.join(' '));
  const name = bare[0]?.slice(bare[0].lastIndexOf('/') + 1);
  if (bare.length > 0 && name !== undefined && name !== '' && name !== bare[0]) forms.push([name, ...bare.slice(1)].join(' '));
  return forms;
}

/** A path variable, `{name}`, not a `{{placeholder}}` (the pattern `run_command`'s resolution uses). */
const VARIABLE = /(?<!\{)\{([A-Za-z0-9_-]+)\}(?!\})/g;

/**
 * `text` with the path variables it names filled in from `variables`, in one pass, as they go into
 * a shell line: a value the shell would read as it is (a plain path) unchanged, any other single-
 * quoted, so a folder named `a b` or `$x;y` stays one word and runs nothing. Unknown variables stay
 * as written. `run_command` fills a command line the same way.
 */
export function fillCommandVariables(text: string, variables: Readonly<Record<string, string>>): string {
  return text.replace(VARIABLE, (whole, name: string) => (Object.prototype.hasOwnProperty.call(variables, name) ? shellWord(variables[name]!) : whole));
}

/** A value as one shell word: as it is when nothing in it is special to the shell, else single-quoted. */
export function shellWord(value: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]*$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** `text` with the variables it names filled in as they are (a folder, not a shell word); unknown ones stay. */
export function fillPathVariables(text: string, variables: Readonly<Record<string, string>>): string {
  return text.replace(VARIABLE, (whole, name: string) => (Object.prototype.hasOwnProperty.call(variables, name) ? variables[name]! : whole));
}
