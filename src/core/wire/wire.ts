// The wire types of the service interface (docs/interface.md §2 and its decisions), in one
// place. The client parses answers into these; the local service produces them.

/** §2.1: every answer, success or failure (on failure `payload` is null). */
export interface Envelope<T> {
  success: boolean;
  payload: T;
  message: string;
}

/** §2.3 */
export interface Subtype {
  id_resource_subtype: number;
  id_resource_type: number;
  name: string;
  name_i18n: string;
  description: string | null;
  data_format_operation: number;
  data_restriction_regex: string | null;
  data_restriction_begin_range: number;
  data_restriction_end_range: number;
  created_at: string;
  updated_at: string;
}

/** §2.4, as read (operations 1, 2, 5, 6): `raw_data` is always a string. */
export interface Feed {
  id_resource_feed: number;
  id_resource: number;
  raw_data: string;
  created_at: string;
}

/** §2.4, as created (operations 3, 4): `raw_data` is the `input` exactly as sent. */
export interface CreatedFeed {
  id_resource_feed: number;
  id_resource: number;
  raw_data: InputValue;
  created_at: string;
}

/** §2.2. A resource without feeds has `id_last_feed` and `last_feed` null (docs/interface.md, Values). */
export interface Resource {
  id_resource: number;
  id_device: number;
  id_resource_subtype: number;
  id_last_feed: number | null;
  name: string;
  description: string;
  lifetime: number;
  api_requests_usage: number;
  api_network_usage: number;
  api_network_income_usage: number;
  api_network_outgoing_usage: number;
  lifetime_updated_at: string | null;
  created_at: string;
  updated_at: string;
  active: number;
  is_alive: boolean;
  is_dead: boolean;
  subtype: Subtype;
  last_feed: Feed | null;
  data_format: unknown[];
}

/** `input` may be a number, a boolean or a string (docs/interface.md, Values). */
export type InputValue = number | boolean | string;

/** One element of an operation-4 body. */
export interface FeedInput {
  id_resource: number;
  input: InputValue;
  /**
   * Our extension of operations 3 and 4 (docs/interface.md, The sample's age): how long before the request
   * was sent the value was sampled, in whole ms, at most LIMITS.maxAgeMs; absent: sampled when sent.
   */
  age_ms?: number;
}

/**
 * Operation 4's answer in a later form of the original platform (docs/interface.md, Operation 4 is atomic):
 * `payload` is this object instead of the plain array; entries of `failed` are rejected elements.
 */
export interface BatchAnswer {
  success: CreatedFeed[];
  failed: FailedFeed[];
}

/**
 * One rejected element of a BatchAnswer. The public record does not show its fields; the agent takes
 * `id_resource` as required and the rest as optional hints for mapping it back to its request index.
 */
export interface FailedFeed {
  id_resource: number;
  /** The element's `input` as sent. */
  input?: InputValue;
  /** The element's index in the request body. */
  index?: number;
  /** Why it was rejected (either name). */
  message?: string;
  error?: string;
}

/** The service's messages for the two successful answers that carry one (§2.1). */
export const MESSAGE_FEED_CREATED = 'Resource Feed Created!';

/** Defaults of the local service (docs/interface.md, Limits); the agent must not assume more. */
export const LIMITS = Object.freeze({
  maxIdsInPath: 100,
  maxBatchElements: 1000,
  maxBodyBytes: 1024 * 1024,
  /**
   * The most a sample's `age_ms` may be: 30 days (docs/interface.md, The sample's age). Far longer than the
   * outages a backlog is meant to bridge, yet an age past it is more likely a fault (a time from another
   * boot's clock, an underflow) than a reading, and a device's clock drifts by minutes in a month. The
   * agent sends an older sample without its age rather than have it refused.
   */
  maxAgeMs: 30 * 24 * 3600 * 1000,
} as const);
