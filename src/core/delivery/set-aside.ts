// Samples that left the queue without being stored: one the service refused (isolated, or failed in the
// `{success, failed}` form), or one of a resource the service says is gone, at intake or at the head of
// the queue. Each is counted (`setAside`, and per resource in `stats().setAsideBy`) and handed to the
// application's `onSetAside` with the reason, which never carries the token.
import type { Log, SampleValue } from '../host/host';
import type { SetAside } from '../config';
import type { Counters } from '../host/counters';
import { errorText } from '../wire/errors';

export interface SetAsidesParts {
  counters: Counters;
  log: Log;
  /** The application's callback, if any. */
  onSetAside: ((item: SetAside) => void) | undefined;
  /** Takes secrets out of a reason before the application sees it. */
  scrub: (text: string) => string;
}

export class SetAsides {
  /** `setAside` per resource id, for the resources with any. */
  readonly by: Record<number, number> = {};
  private readonly counters: Counters;
  private readonly log: Log;
  private readonly onSetAside: ((item: SetAside) => void) | undefined;
  private readonly scrub: (text: string) => string;

  constructor(parts: SetAsidesParts) {
    this.counters = parts.counters;
    this.log = parts.log;
    this.onSetAside = parts.onSetAside;
    this.scrub = parts.scrub;
  }

  /** A sample of `resource` left unstored; `quiet`: its reason was logged once already (a gone resource). */
  add(resource: number, value: SampleValue, reason: string, quiet: boolean): void {
    this.counters.setAside++;
    this.by[resource] = (this.by[resource] ?? 0) + 1;
    if (!quiet) this.log('warn', 'set aside a sample of resource ' + resource + ': ' + reason);
    const callback = this.onSetAside;
    if (callback === undefined) return;
    try {
      callback({ resource, value, reason: this.scrub(reason) });
    } catch (e) {
      this.log('error', 'onSetAside threw: ' + errorText(e));
    }
  }
}
