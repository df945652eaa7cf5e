// The XS side of the harness, bundled into the worker: how a scenario's commands reach Node (the worker's
// synchronous issueCommand) and how a result gets back out of an evaluation. The Host the agent runs on
// is the scenario context's (test/scenarios/context.ts): virtual timers, requests through this link.
import { errorText } from '../../src/core/errors';
import type { Answers, Command, Link } from '../scenarios/protocol';

// Globals of the xsnap worker.
declare const issueCommand: (message: ArrayBufferLike) => ArrayBuffer;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Sends one JSON command; the answer is there when issueCommand returns (Node answers in between). */
export const xsLink: Link = <C extends Command>(command: C) =>
  new Promise<Answers[C['cmd']]>((resolve, reject) => {
    const reply = JSON.parse(decoder.decode(issueCommand(encoder.encode(JSON.stringify(command)).buffer))) as {
      ok?: Answers[C['cmd']];
      error?: string;
    };
    if (reply.error !== undefined) reject(new Error(reply.error));
    else resolve(reply.ok as Answers[C['cmd']]);
  });

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
