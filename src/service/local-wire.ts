// The JSON of the local service's own API under /_local/ (docs/dashboard.md), which the dashboard page
// reads. It is not part of the interface. Types only: the page (plain JavaScript checked by tsc) imports
// them, so the server and the page agree on one definition.
import type { Resource } from '../core/wire/wire';

/**
 * How the page shows a resource's values, by the agent's rule for a command's value: a subtype with a
 * regex that is not empty holds strings, a 0..1 range with a null regex booleans, anything else numbers.
 */
export type ValueKind = 'number' | 'boolean' | 'string';

/**
 * A resource record of the interface (docs/interface.md §2.2), read without counting, and what the
 * service knows beside it: how its values are shown, whether it takes commands (its type is among the
 * seed's `command_types`, docs/interface.md, Commands), and the unit its subtype names (a number's only).
 */
export interface LocalResource {
  kind: ValueKind;
  command: boolean;
  /** A symbol, `°C`, `%`; null when the subtype names none (src/service/units.ts). */
  unit: string | null;
  record: Resource;
}

/** A device as the page lists it: never its token. */
export interface LocalDevice {
  id_device: number;
  public_key: string;
  name: string;
  resources: LocalResource[];
}

/**
 * GET /_local/devices: one page of the devices (`page`, `limit`). `now` is the service's clock, in the
 * interface's timestamp form; `total` how many devices the service has.
 */
export interface LocalState {
  now: string;
  total: number;
  devices: LocalDevice[];
}

/**
 * GET /_local/resources/{id}/feeds: one page of the resource's feeds, as columns named for the fields of
 * the feed record (§2.4): the i-th feed is `id_resource_feed[i]`, `created_at[i]`, `raw_data[i]`. Columns
 * are the form a chart takes, and a third of the bytes of records. `next` is the cursor of the following
 * page, null at the end.
 */
export interface FeedPage {
  id_resource: number;
  id_resource_feed: number[];
  created_at: string[];
  raw_data: string[];
  next: number | null;
}
