// Where a text stops being JSON, as a line and a column, and nothing of the text itself. JSON.parse's
// own message quotes the source around the fault ("Unexpected token 'N', ..."token": NEWTOKEN"..."), which
// would print part of a secret from a seed file; and for that kind of fault V8 gives no position at all.
// So the text is scanned again, by the grammar of RFC 8259, once JSON.parse has refused it: without
// recursion (an explicit stack of open containers), so that no nesting depth can overflow the call stack.

export interface TextPosition {
  /** From 1. */
  line: number;
  /** From 1, in UTF-16 code units, as editors count. */
  column: number;
}

const SPACE = /[ \t\n\r]*/y;
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const SCALAR = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;

/** Where `text` first breaks the JSON grammar (its end, when it ends too soon); null when it is JSON. */
export function jsonFault(text: string): TextPosition | null {
  const at = faultOffset(text);
  if (at < 0) return null;
  const lineStart = text.lastIndexOf('\n', at - 1) + 1;
  let line = 1;
  for (let i = text.indexOf('\n'); i >= 0 && i < at; i = text.indexOf('\n', i + 1)) line++;
  return { line, column: at - lineStart + 1 };
}

/** The offset of the first character that cannot continue a JSON text; -1 when it is one. */
function faultOffset(text: string): number {
  /** The containers the scan is inside, innermost last. */
  const open: ('{' | '[')[] = [];
  const skip = (from: number) => match(SPACE, text, from);
  let at = skip(0);
  for (;;) {
    // A value starts at `at`.
    const c = text[at];
    if (c === '{' || c === '[') {
      open.push(c);
      at = skip(at + 1);
      if (text[at] !== (c === '{' ? '}' : ']')) {
        if (c === '{') {
          at = member(text, at);
          if (at < 0) return -at - 1;
        }
        continue;
      }
      open.pop();
      at = skip(at + 1);
    } else {
      const end = match(SCALAR, text, at);
      if (end === at) return at;
      at = skip(end);
    }
    // A value ended: a comma, or the end of its container, or of the text.
    for (;;) {
      const top = open[open.length - 1];
      if (top === undefined) return at === text.length ? -1 : at;
      if (text[at] === ',') {
        at = skip(at + 1);
        if (top === '{') {
          at = member(text, at);
          if (at < 0) return -at - 1;
        }
        break;
      }
      if (text[at] !== (top === '{' ? '}' : ']')) return at;
      open.pop();
      at = skip(at + 1);
    }
  }
}

/** Past an object member's name and colon (and the space after): where its value starts; -(fault + 1) when it breaks. */
function member(text: string, at: number): number {
  const name = match(STRING, text, at);
  if (name === at) return -at - 1;
  const colon = match(SPACE, text, name);
  if (text[colon] !== ':') return -colon - 1;
  return match(SPACE, text, colon + 1);
}

/** The end of `pattern`'s match at `at` (a sticky pattern), or `at` when it does not match there. */
function match(pattern: RegExp, text: string, at: number): number {
  pattern.lastIndex = at;
  return pattern.test(text) ? pattern.lastIndex : at;
}
