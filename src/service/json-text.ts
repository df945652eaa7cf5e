// JSON that a person wrote (a seed, a config file): its value, or where it stops being JSON and what was
// expected there, and nothing of the text itself. JSON.parse's own message quotes the source around the
// fault ("Unexpected token 'N', ..."token": NEWTOKEN"..."), which would print part of a secret; for that
// kind of fault V8 gives no position at all, and its wording changes from one Node to the next. So the
// text is scanned again, by the grammar of RFC 8259, once JSON.parse has refused it: without recursion
// (an explicit stack of open containers), so that no nesting depth can overflow the call stack.

/** Where a text stops being JSON, and what was expected there. */
export interface JsonFault {
  /** From 1. */
  line: number;
  /** From 1, in UTF-16 code units, as editors count. */
  column: number;
  what: string;
}

/** A text that is not JSON: `not JSON at line L, column C: what`. */
export class JsonTextError extends Error {
  override name = 'JsonTextError';
  constructor(readonly fault: JsonFault | null) {
    super(fault === null ? 'not JSON' : `not JSON at line ${fault.line}, column ${fault.column}: ${fault.what}`);
  }
}

/** JSON.parse, refusing with a JsonTextError that quotes nothing. */
export function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Null only where JSON.parse refuses what the grammar allows: nesting deeper than V8 takes.
    throw new JsonTextError(jsonFault(text));
  }
}

/** Where `text` first breaks the JSON grammar (its end, when it ends too soon), and why; null when it is JSON. */
export function jsonFault(text: string): JsonFault | null {
  const fault = faultIn(text);
  if (fault === null) return null;
  const { at, what } = fault;
  const lineStart = text.lastIndexOf('\n', at - 1) + 1;
  let line = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < at; i = text.indexOf('\n', i + 1)) line++;
  return { line, column: at - lineStart + 1, what };
}

const SPACE = /[ \t\n\r]*/y;
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const ESCAPE = /\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/y;
const SCALAR = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;

interface Fault {
  at: number;
  what: string;
}

const ENDS = 'the text ends too soon';

/** The first character that cannot continue a JSON text, and what could have; null when it is one. */
function faultIn(text: string): Fault | null {
  /** The containers the scan is inside, innermost last. */
  const open: ('{' | '[')[] = [];
  const skip = (from: number) => match(SPACE, text, from);
  if (text.charCodeAt(0) === 0xfeff) return { at: 0, what: 'a byte order mark (BOM) before the JSON: save the file without it' };
  let at = skip(0);
  if (at === text.length) return { at, what: at === 0 ? 'the text is empty' : 'the text is only white space' };
  for (;;) {
    // A value starts at `at`.
    const c = text[at];
    if (c === '{' || c === '[') {
      open.push(c);
      at = skip(at + 1);
      if (text[at] !== (c === '{' ? '}' : ']')) {
        if (c === '{') {
          const value = member(text, at, false);
          if (typeof value !== 'number') return value;
          at = value;
        }
        continue;
      }
      open.pop();
      at = skip(at + 1);
    } else {
      const end = match(SCALAR, text, at);
      if (end === at) return notAValue(text, at, open[open.length - 1]);
      at = skip(end);
    }
    // A value ended: a comma, or the end of its container, or of the text.
    for (;;) {
      const top = open[open.length - 1];
      if (top === undefined) return at === text.length ? null : { at, what: 'more after the end of the JSON value' };
      if (text[at] === ',') {
        at = skip(at + 1);
        if (top === '{') {
          const value = member(text, at, true);
          if (typeof value !== 'number') return value;
          at = value;
        } else if (text[at] === ']') {
          return { at, what: "a comma before ']': JSON has no trailing commas" };
        }
        break;
      }
      const close = top === '{' ? '}' : ']';
      if (text[at] !== close) return { at, what: at === text.length ? ENDS : `expected ',' or '${close}'` };
      open.pop();
      at = skip(at + 1);
    }
  }
}

/** Past an object member's name and colon (and the space after): where its value starts, or the fault. */
function member(text: string, at: number, afterComma: boolean): number | Fault {
  const name = match(STRING, text, at);
  if (name === at) {
    if (text[at] === '"') return badString(text, at);
    if (at === text.length) return { at, what: ENDS };
    if (afterComma && text[at] === '}') return { at, what: "a comma before '}': JSON has no trailing commas" };
    if (text[at] === '/') return { at, what: 'a comment: JSON has none' };
    return { at, what: 'expected a property name in double quotes' };
  }
  const colon = match(SPACE, text, name);
  if (text[colon] !== ':') return { at: colon, what: colon === text.length ? ENDS : "expected ':' after the property name" };
  return match(SPACE, text, colon + 1);
}

/** Why no value starts at `at`. */
function notAValue(text: string, at: number, inside: '{' | '[' | undefined): Fault {
  if (at === text.length) return { at, what: ENDS };
  const c = text[at];
  if (c === '"') return badString(text, at);
  if (c === "'") return { at, what: 'a string in single quotes: JSON takes double quotes' };
  if (c === '/') return { at, what: 'a comment: JSON has none' };
  if (c === '-' || (c >= '0' && c <= '9')) return { at, what: 'a number JSON cannot read (digits, an optional fraction and exponent)' };
  const where = inside === undefined ? '' : inside === '{' ? ' after the property name' : ' in the array';
  return { at, what: `expected a value${where}: a string, a number, an object, an array, true, false or null` };
}

/**
 * The fault inside the string that starts at `at`, which STRING refused: a bad character before its first
 * unescaped quote (else it would have matched), or no closing quote at all.
 */
function badString(text: string, at: number): Fault {
  for (let i = at + 1; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20) return { at: i, what: 'a control character in a string: a line break or a tab is written \\n or \\t' };
    if (code === 0x5c) {
      const end = match(ESCAPE, text, i);
      if (end === i) return { at: i, what: 'a backslash that starts no escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)' };
      i = end - 1;
    }
  }
  return { at, what: 'a string without its closing quote' };
}

/** The end of `pattern`'s match at `at` (a sticky pattern), or `at` when it does not match there. */
function match(pattern: RegExp, text: string, at: number): number {
  pattern.lastIndex = at;
  return pattern.test(text) ? pattern.lastIndex : at;
}
