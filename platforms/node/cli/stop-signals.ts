// SIGINT and SIGTERM for a command that drains before it exits: the first stops with a drain, a second
// quits at once. One Ctrl-C can arrive twice: under `npm start` or `npm run gateway:demo`, the terminal
// sends SIGINT to the whole process group and npm forwards its own copy to its script as well (later, on a
// busy machine). A second signal within SAME_PRESS_MS of the first is that copy, and is ignored.
export const SAME_PRESS_MS = 500;

export interface StopSignals {
  /**
   * A stop for another reason (the output closed), after which a signal counts as a second press. False
   * when a signal or an earlier call stopped it already, or after `finish()`: nothing to do.
   */
  stop(): boolean;
  /** Waits out a copy of the first signal that may still be on its way, then ignores every signal. */
  finish(): Promise<void>;
}

/**
 * Handles SIGINT and SIGTERM, named as `names` says in what the callbacks print: `first` on the first,
 * `again` on one that is not a copy of it. The handlers stay after `finish()` (a handler does not hold the
 * process), so that a late copy cannot kill a process on its way out with its own status.
 */
export function handleStopSignals(
  first: (name: string) => void,
  again: (name: string) => void,
  names: { SIGINT: string; SIGTERM: string } = { SIGINT: 'SIGINT', SIGTERM: 'SIGTERM' },
): StopSignals {
  let stoppedAt: number | null = null;
  let finished = false;
  const on = (name: string) => (): void => {
    if (finished) return;
    if (stoppedAt === null) {
      stoppedAt = performance.now();
      first(name);
    } else if (performance.now() - stoppedAt >= SAME_PRESS_MS) {
      again(name);
    }
  };
  process.on('SIGINT', on(names.SIGINT));
  process.on('SIGTERM', on(names.SIGTERM));
  return {
    stop() {
      if (finished || stoppedAt !== null) return false;
      stoppedAt = performance.now();
      return true;
    },
    async finish() {
      // The copy must come while the handler takes it, not while the process exits, whose default
      // action for it is to die of it.
      const wait = stoppedAt === null ? 0 : stoppedAt + SAME_PRESS_MS - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      finished = true;
    },
  };
}
