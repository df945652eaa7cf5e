// A JSON file the user named on the command line (a config, a seed): every command reads it here, so that
// each says the same of one that is not JSON: `FILE: not JSON at line L, column C: what`, quoting nothing
// of it (it may hold a token).
import { readFileSync } from 'node:fs';

import { JsonTextError, parseJsonText } from '../../../src/service/json-text';
import { UsageError } from './usage';

/** The file's JSON value; a UsageError when it cannot be read or is not JSON. `what` names it: "the config". */
export function readJsonFile(file: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read ${what} ${file}: ${(e as Error).message}`);
  }
  try {
    return parseJsonText(text);
  } catch (e) {
    throw e instanceof JsonTextError ? new UsageError(`${file}: ${e.message}`) : e;
  }
}
