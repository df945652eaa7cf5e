// JSON a person wrote: where it stops being JSON and what was expected there, never a piece of the text;
// and the scan agrees with JSON.parse on what is JSON.
import { describe, expect, it } from 'vitest';
import { createRandom } from '../../src/core/host/random';
import { JsonTextError, jsonFault, parseJsonText } from '../../src/service/json-text';

const VALUE = 'expected a value: a string, a number, an object, an array, true, false or null';

describe('a text that is not JSON', () => {
  it('says at which line and column, and what was expected there', () => {
    const cases: [string, string][] = [
      ['', 'line 1, column 1: the text is empty'],
      [' \n ', 'line 2, column 2: the text is only white space'],
      ['\ufeff{}', 'line 1, column 1: a byte order mark (BOM) before the JSON: save the file without it'],
      ['{"a": 1,\n "b": 2,\n}', "line 3, column 1: a comma before '}': JSON has no trailing commas"],
      ['[1, 2,]', "line 1, column 7: a comma before ']': JSON has no trailing commas"],
      ['{"a": 1 "b": 2}', "line 1, column 9: expected ',' or '}'"],
      ['[1 2]', "line 1, column 4: expected ',' or ']'"],
      ['{"a" 1}', "line 1, column 6: expected ':' after the property name"],
      ['{a: 1}', 'line 1, column 2: expected a property name in double quotes'],
      ["{'a': 1}", 'line 1, column 2: expected a property name in double quotes'],
      ["['a']", 'line 1, column 2: a string in single quotes: JSON takes double quotes'],
      ['{"a": 1, // why\n}', 'line 1, column 10: a comment: JSON has none'],
      ['{"a": [1, {"b": ', 'line 1, column 17: the text ends too soon'],
      ['{"a": "b', 'line 1, column 7: a string without its closing quote'],
      ['{"a": "b\n"}', 'line 1, column 9: a control character in a string: a line break or a tab is written \\n or \\t'],
      ['["C:\\temp\\x"]', 'line 1, column 10: a backslash that starts no escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)'],
      ['[-]', 'line 1, column 2: a number JSON cannot read (digits, an optional fraction and exponent)'],
      ['{} {}', 'line 1, column 4: more after the end of the JSON value'],
      ['True', `line 1, column 1: ${VALUE}`],
      ['[undefined]', `line 1, column 2: ${VALUE.replace('value', 'value in the array')}`],
    ];
    for (const [text, message] of cases) {
      expect(() => JSON.parse(text), text).toThrow();
      expect(() => parseJsonText(text), JSON.stringify(text)).toThrow(new JsonTextError(jsonFault(text)));
      expect(jsonFault(text), JSON.stringify(text)).not.toBeNull();
      expect(new JsonTextError(jsonFault(text)).message, JSON.stringify(text)).toBe(`not JSON at ${message}`);
    }
  });

  it('never quotes the text: a token left unquoted stays unprinted', () => {
    const text = '{\n  "url": "http://127.0.0.1:8080",\n  "token": NEWTOKEN0123456789\n}';
    expect(() => parseJsonText(text)).toThrow(/^not JSON at line 3, column 12: expected a value after the property name: [^N]*$/);
  });

  it('gives the value of a JSON text', () => {
    expect(parseJsonText(' {"a": [1, "x", null, true]} ')).toEqual({ a: [1, 'x', null, true] });
  });
});

describe('the scan', () => {
  it('finds a fault exactly where JSON.parse refuses, over thousands of broken texts', () => {
    const random = createRandom(0x15011);
    const pieces = ['{', '}', '[', ']', ',', ':', '"a"', '"\\n"', '"\\q"', '"', '1', '-', '0.5', '1e', 'true', 'nul', ' ', '\n', "'", '/'];
    const valid = JSON.stringify({ a: [1, -2.5e3, 'x"y\\z\u0001', { b: null, c: [true, false, {}] }], d: '' }, null, 1);
    for (let i = 0; i < 5000; i++) {
      let text: string;
      if (i % 2 === 0) {
        // A valid text with one piece put in, taken out or replaced.
        const at = Math.floor(random() * valid.length);
        const cut = Math.floor(random() * 3);
        text = valid.slice(0, at) + (random() < 0.7 ? pieces[Math.floor(random() * pieces.length)] : '') + valid.slice(at + cut);
      } else {
        text = Array.from({ length: 1 + Math.floor(random() * 8) }, () => pieces[Math.floor(random() * pieces.length)]).join('');
      }
      let parses = true;
      try {
        JSON.parse(text);
      } catch {
        parses = false;
      }
      expect(jsonFault(text) === null, JSON.stringify(text)).toBe(parses);
    }
  });
});
