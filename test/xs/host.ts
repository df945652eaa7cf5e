// The XS side of the harness, bundled into the worker: how a scenario's commands reach Node (the worker's
// synchronous issueCommand) and how a result gets back out of an evaluation. The Host the agent runs on
// is the scenario context's (test/scenarios/context.ts): virtual timers, requests through this link.
import { errorText } from '../../src/core/wire/errors';
import type { Answers, Command, Link } from '../scenarios/protocol';
import type { DiskLink } from '../moddable/standins/file';

// Globals of the xsnap worker.
declare const issueCommand: (message: ArrayBufferLike) => ArrayBuffer;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Sends one JSON command and returns its answer, or throws its error: Node answers before issueCommand returns. */
function command<C extends Command>(c: C): Answers[C['cmd']] {
  const reply = JSON.parse(decoder.decode(issueCommand(encoder.encode(JSON.stringify(c)).buffer))) as { ok?: Answers[C['cmd']]; error?: string };
  if (reply.error !== undefined) throw new Error(reply.error);
  return reply.ok as Answers[C['cmd']];
}

/** The scenarios' link: `command` in a promise. */
export const xsLink: Link = <C extends Command>(c: C) => new Promise<Answers[C['cmd']]>((resolve) => resolve(command(c)));

/** The file stand-in's disk: synchronous, as the SDK's File is. */
export const xsDisk: DiskLink = (op) => command({ cmd: 'disk', op });

/**
 * The value an evaluation returns for work that finishes in promise jobs: xsnap runs the jobs to idle,
 * then sends the box's `result` (`{ok}` or `{error}` as JSON) back as the evaluation's reply.
 */
export function settled(work: Promise<unknown>): { result?: ArrayBuffer } {
  const box: { result?: ArrayBuffer } = {};
  const put = (outcome: unknown) => {
    box.result = encoder.encode(JSON.stringify(outcome)).buffer;
  };
  work.then(
    (ok) => put({ ok: ok === undefined ? null : ok }),
    (e) => put({ error: errorText(e) }),
  );
  return box;
}
