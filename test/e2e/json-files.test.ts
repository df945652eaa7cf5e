// Every command that reads a JSON file the user named (gateway --config, simulate --config, serve --seed)
// says the same of one that is not JSON, in one line: where, what, and nothing of the text.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { withBuiltCli } from './support';

const work = withBuiltCli('e2e-json-files-');
const run = promisify(execFile);

describe('a JSON file that is not JSON', () => {
  it('gets the same one line from every command: FILE: not JSON at line L, column C: what', async () => {
    const file = join(work.dir, 'broken.json');
    // A trailing comma, and a token that must not be printed.
    writeFileSync(file, '{\n  "token": "NEWTOKEN0123456789",\n}\n');
    const expected = `${file}: not JSON at line 3, column 1: a comma before '}': JSON has no trailing commas`;
    for (const args of [['gateway', '--check', '--config', file], ['simulate', '--config', file], ['serve', '--seed', file]]) {
      const result = await run(process.execPath, [work.cli(), ...args]).then(
        () => ({ code: 0, stdout: '', stderr: '' }),
        (e: { code: number; stdout: string; stderr: string }) => e,
      );
      expect(result.code, args[0]).toBe(2);
      expect(result.stderr, args[0]).toBe(`feed-agent ${args[0]}: ${expected}\n`);
      expect(result.stdout, args[0]).toBe('');
    }
  });
});
