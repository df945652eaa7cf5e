// What every command does with bad input: one line on stderr that names the problem and points to the
// command's --help, and one exit status for it in every command.
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';

/** The exit status of bad input (an unknown option, a bad value, an unusable file), in every command. */
export const EXIT_USAGE = 2;

/** Bad input: main prints its message and exits with EXIT_USAGE. */
export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;

/** The options of `feed-agent <command>`; an unknown or malformed one is a UsageError that points to --help. */
export function parseOptions<O extends Options>(command: string, args: string[], options: O) {
  try {
    return parseArgs({ args: withNegativeNumbers(args, options), strict: true, allowPositionals: false, options }).values;
  } catch (e) {
    throw new UsageError(`${flagProblem(e as Error & { code?: string })} (see feed-agent ${command} --help)`);
  }
}

/**
 * `--duration -1` as `--duration=-1`: parseArgs takes a value that starts with a dash for a forgotten value,
 * which would hide what is wrong with it (a negative number) behind "needs a value". The option's own
 * check then names the value.
 */
function withNegativeNumbers(args: string[], options: Options): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const name = args[i].startsWith('--') ? args[i].slice(2) : null;
    const next = args[i + 1];
    if (name !== null && Object.hasOwn(options, name) && options[name].type === 'string' && next !== undefined && /^-[\d.]/.test(next)) {
      out.push(`${args[i]}=${next}`);
      i++;
    } else out.push(args[i]);
  }
  return out;
}

/** parseArgs' messages, shortened to the point; none of them quotes an option's value. */
function flagProblem(e: Error & { code?: string }): string {
  const option = /'(-[^' ]+)/.exec(e.message)?.[1];
  if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' && option !== undefined) return `unknown option ${option}`;
  if (e.code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') return 'unexpected argument: every option starts with --';
  if (e.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' && option !== undefined) {
    if (/argument missing/.test(e.message)) return `${option} needs a value`;
    // The next argument starts with a dash: another option, or a value that must be attached.
    if (/ambiguous/.test(e.message)) return `${option} needs a value: it is followed by an option (a value that starts with "-" is written ${option}=VALUE)`;
    return `${option} takes no value`;
  }
  return e.message;
}

/** `text` as an integer from `min` to `max`, or a UsageError that names `option` and quotes the text. */
export function integer(text: string, option: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max) throw new UsageError(`${option} must be an integer from ${min} to ${max}, not ${JSON.stringify(text)}`);
  return value;
}
