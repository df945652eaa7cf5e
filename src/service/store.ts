// Storage: the SQLite schema, the seed upsert and the prepared statements of the hot path.
// Subtypes, devices and resources change only when a seed is applied at start, so they are also held in
// memory (the catalog); feeds, counters and presence live only in the database.
import type Database from 'better-sqlite3';
import { compileRestriction } from '../core/wire/validate';
import type { Restriction } from '../core/wire/validate';
import type { Feed, Resource, Subtype } from '../core/wire/wire';
import { tokenDigest } from './auth';
import { SeedError } from './seed';
import { loadSqlite } from './sqlite';
import type { Seed } from './seed';

export interface SubtypeEntry {
  record: Subtype;
  restriction: Restriction;
}

export interface DeviceEntry {
  id: number;
  publicKey: string;
  tokenDigest: Buffer;
}

export interface ResourceEntry {
  id: number;
  deviceId: number;
  subtype: SubtypeEntry;
}

/**
 * A resource row joined with its last feed: the stored fields of the record (docs/interface.md §2.2), with
 * `lifetime_updated_at` in epoch ms; the computed ones (network sum, presence, nested records) are not stored.
 */
export type ResourceRow = Omit<
  Resource,
  'api_network_usage' | 'lifetime_updated_at' | 'is_alive' | 'is_dead' | 'subtype' | 'last_feed' | 'data_format'
> & {
  lifetime_updated_at: number | null;
  last_raw_data: string | null;
  last_created_at: string | null;
};

/** A device as the dashboard lists it: never its token or the token's digest. */
export interface DeviceListing {
  id_device: number;
  public_key: string;
  name: string;
}

interface PageBounds {
  resource: number;
  at: string;
  id: number;
  from: string;
  to: string;
  since: number;
  limit: number;
}

/** A feed to store: its resource, its value as read back (§2.4) and its time in the interface's form. */
export interface NewFeed {
  resource: number;
  rawData: string;
  createdAt: string;
}

/** What one request does to one resource, applied in one statement. */
export interface Touch {
  outgoingBytes: number;
  incomeBytes: number;
  /** Epoch ms to set `lifetime_updated_at` to, or null to leave presence alone. */
  presenceAt: number | null;
  /** Feeds this request created on the resource (null: none). */
  firstFeed: number | null;
  lastFeed: number | null;
  /** Becomes `updated_at` when the request created feeds (the resource's last feed changed). */
  stamp: string;
}

const SCHEMA_VERSION = 1;
/** Rows per INSERT statement, largest first; a batch is cut greedily into these. */
const INSERT_GROUPS = [64, 16, 4, 1];

// AUTOINCREMENT: ids are never reused, so they keep increasing across restarts (docs/interface.md, Ids).
// id_first_feed is kept beside id_last_feed so that operations 5 and 6 need no index over feeds.
const SCHEMA = `
CREATE TABLE subtypes (
  id_resource_subtype INTEGER PRIMARY KEY,
  id_resource_type INTEGER NOT NULL,
  name TEXT NOT NULL,
  name_i18n TEXT NOT NULL,
  description TEXT,
  data_format_operation INTEGER NOT NULL,
  data_restriction_regex TEXT,
  data_restriction_begin_range INTEGER NOT NULL,
  data_restriction_end_range INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE devices (
  id_device INTEGER PRIMARY KEY AUTOINCREMENT,
  public_key TEXT NOT NULL UNIQUE,
  token_sha256 BLOB NOT NULL,
  name TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE resources (
  id_resource INTEGER PRIMARY KEY,
  id_device INTEGER NOT NULL REFERENCES devices,
  id_resource_subtype INTEGER NOT NULL REFERENCES subtypes,
  id_first_feed INTEGER,
  id_last_feed INTEGER,
  name TEXT NOT NULL,
  description TEXT NOT NULL,
  lifetime INTEGER NOT NULL,
  api_requests_usage INTEGER NOT NULL DEFAULT 0,
  api_network_income_usage INTEGER NOT NULL DEFAULT 0,
  api_network_outgoing_usage INTEGER NOT NULL DEFAULT 0,
  lifetime_updated_at INTEGER,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  active INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE feeds (
  id_resource_feed INTEGER PRIMARY KEY AUTOINCREMENT,
  id_resource INTEGER NOT NULL REFERENCES resources,
  raw_data TEXT NOT NULL,
  created_at TEXT NOT NULL
);
`;

// The dashboard reads a resource's feeds over a time range, in pages (feedPage). Created when missing at
// every open, also on a file made before it existed: an index changes no data, so the schema version
// stays and an older service still opens the file.
const FEED_INDEX = 'CREATE INDEX IF NOT EXISTS feeds_by_resource_time ON feeds (id_resource, created_at)';

/**
 * One page of a resource's feeds in time order (created_at, then id: ids break ties within a second).
 * The window's start and the cursor are folded into one lower bound (one upper bound when descending),
 * so SQLite seeks straight to the page in the index instead of scanning from the start of the window.
 * `since` keeps the feeds stored after that id (0: all). Its `+` keeps the key's range out of SQLite's
 * choices: the page stays a range of the index, filtered by id, so its cost is bounded by the resource's
 * feeds in the window, never a scan of every resource's feeds stored since.
 */
export const FEED_PAGE_SQL = {
  asc: `SELECT id_resource_feed, created_at, raw_data FROM feeds
    WHERE id_resource = @resource AND (created_at, id_resource_feed) > (@at, @id) AND created_at <= @to AND +id_resource_feed > @since
    ORDER BY created_at, id_resource_feed LIMIT @limit`,
  desc: `SELECT id_resource_feed, created_at, raw_data FROM feeds
    WHERE id_resource = @resource AND (created_at, id_resource_feed) < (@at, @id) AND created_at >= @from AND +id_resource_feed > @since
    ORDER BY created_at DESC, id_resource_feed DESC LIMIT @limit`,
};

/** A feed of a page as SQLite gives it, without an object per row (10,000 rows make a page). */
export type FeedRow = [id_resource_feed: number, created_at: string, raw_data: string];

/** Which feeds of a resource one page holds; timestamps in the interface's form, both ends included. */
export interface FeedRange {
  from: string;
  to: string;
  order: 'asc' | 'desc';
  /** The page continues past this feed, in `order`; null: from the start of the range. */
  after: Pick<Feed, 'id_resource_feed' | 'created_at'> | null;
  /** Only feeds stored after this one, by id (their arrival), whatever their time; 0: all. */
  since: number;
  limit: number;
}

const SUBTYPE_COLUMNS =
  'id_resource_subtype, id_resource_type, name, name_i18n, description, data_format_operation, data_restriction_regex, ' +
  'data_restriction_begin_range, data_restriction_end_range, created_at, updated_at';

export class Store {
  private readonly db: Database.Database;
  private devices = new Map<string, DeviceEntry>();
  private resources = new Map<number, ResourceEntry>();
  /** Each device's resource ids in increasing order, by device id. */
  private resourcesOf = new Map<number, number[]>();
  /** The resource types that take commands, as the seed last applied says (Seed.command_types): not stored. */
  private commandTypes = new Set<number>();
  private readonly inTransaction: <T>(fn: () => T) => T;
  private readonly statements;
  /** The insert statement of each group size (INSERT_GROUPS), made on first use, for rows that share their time. */
  private readonly inserts = new Map<number, Database.Statement<unknown[]>>();
  /** The same for rows with a time each. */
  private readonly timedInserts = new Map<number, Database.Statement<unknown[]>>();
  /** The upserts' statements, made from SQL generated per table and columns, by their text. */
  private readonly prepared = new Map<string, Database.Statement<unknown[]>>();

  /** Opens (and creates when needed) the database; in memory without a file. */
  constructor(file?: string) {
    // No busy wait: the only other holder of the file can be another service, which keeps it.
    const Sqlite = loadSqlite();
    try {
      this.db = new Sqlite(file ?? ':memory:', { timeout: 0 });
    } catch (error) {
      // better-sqlite3's message names no file ("the directory does not exist"): say which.
      throw new Error(`cannot open the database ${file}: ${(error as Error).message}`);
    }
    try {
      if (file !== undefined) {
        // One service per file: a second one fails at once instead of sharing a stale catalog.
        this.db.pragma('locking_mode = EXCLUSIVE');
        this.db.pragma('journal_mode = WAL');
        // With WAL, NORMAL still makes every commit survive a crash of the process (kill -9); only a
        // power cut can lose the last commits, and FULL would cost an fsync per request.
        this.db.pragma('synchronous = NORMAL');
      }
      this.db.pragma('foreign_keys = ON');
      this.migrate(file);
    } catch (error) {
      this.db.close();
      if ((error as { code?: string }).code === 'SQLITE_BUSY') throw new Error(`database ${file} is in use by another process`);
      throw error;
    }
    const db = this.db;
    this.inTransaction = db.transaction((fn: () => unknown) => fn()) as <T>(fn: () => T) => T;
    this.statements = {
      touch: db.prepare<[Touch & { id: number }]>(`
        UPDATE resources SET
          api_requests_usage = api_requests_usage + 1,
          api_network_outgoing_usage = api_network_outgoing_usage + @outgoingBytes,
          api_network_income_usage = api_network_income_usage + @incomeBytes,
          lifetime_updated_at = coalesce(@presenceAt, lifetime_updated_at),
          id_first_feed = coalesce(id_first_feed, @firstFeed),
          id_last_feed = coalesce(@lastFeed, id_last_feed),
          updated_at = CASE WHEN @lastFeed IS NULL THEN updated_at ELSE @stamp END
        WHERE id_resource = @id`),
      addIncome: db.prepare<[number, number]>(
        'UPDATE resources SET api_network_income_usage = api_network_income_usage + ? WHERE id_resource = ?',
      ),
      resource: db.prepare<[number], ResourceRow>(`
        SELECT r.id_resource, r.id_device, r.id_resource_subtype, r.id_last_feed, r.name, r.description, r.lifetime,
          r.api_requests_usage, r.api_network_income_usage, r.api_network_outgoing_usage, r.lifetime_updated_at,
          r.created_at, r.updated_at, r.active, f.raw_data AS last_raw_data, f.created_at AS last_created_at
        FROM resources r LEFT JOIN feeds f ON f.id_resource_feed = r.id_last_feed
        WHERE r.id_resource = ?`),
      // Both select a feed's columns in the order of the interface (§2.4): a row is the record as read.
      firstFeed: db.prepare<[number], Feed>(`
        SELECT f.id_resource_feed, f.id_resource, f.raw_data, f.created_at
        FROM resources r JOIN feeds f ON f.id_resource_feed = r.id_first_feed WHERE r.id_resource = ?`),
      lastFeed: db.prepare<[number], Feed>(`
        SELECT f.id_resource_feed, f.id_resource, f.raw_data, f.created_at
        FROM resources r JOIN feeds f ON f.id_resource_feed = r.id_last_feed WHERE r.id_resource = ?`),
      feed: db.prepare<[number], Feed>('SELECT id_resource_feed, id_resource, raw_data, created_at FROM feeds WHERE id_resource_feed = ?'),
      pageAsc: db.prepare<[PageBounds], FeedRow>(FEED_PAGE_SQL.asc).raw(true),
      pageDesc: db.prepare<[PageBounds], FeedRow>(FEED_PAGE_SQL.desc).raw(true),
      // A feed the platform wrote: the resource's feeds move on, its counters and presence do not.
      platformWrote: db.prepare<[{ id: number; feed: number; stamp: string }]>(`
        UPDATE resources SET id_first_feed = coalesce(id_first_feed, @feed), id_last_feed = @feed, updated_at = @stamp
        WHERE id_resource = @id`),
      devicePage: db.prepare<[number, number], DeviceListing>('SELECT id_device, public_key, name FROM devices ORDER BY id_device LIMIT ? OFFSET ?'),
    };
    this.loadCatalog();
  }

  close(): void {
    this.db.close();
  }

  device(publicKey: string): DeviceEntry | undefined {
    return this.devices.get(publicKey);
  }

  resource(id: number): ResourceEntry | undefined {
    return this.resources.get(id);
  }

  /** Whether a resource of this subtype takes commands (its type is among the seed's command_types). */
  takesCommands(subtype: Subtype): boolean {
    return this.commandTypes.has(subtype.id_resource_type);
  }

  /** Runs `fn` in one transaction: all of its writes are stored, or none. */
  transaction<T>(fn: () => T): T {
    return this.inTransaction(fn);
  }

  /**
   * Stores feeds in order and returns the id of the first; the others follow it one by one (in one
   * transaction nothing else writes, and AUTOINCREMENT gives each row the next id), whatever their
   * `created_at`. Rows go in groups of up to 64 per statement: one statement per row would cost three
   * times as much. A group whose rows share their `created_at` (a request's without ages) binds it once
   * (a fifth less time for 1,000 rows); the rows of aged samples bind their own.
   */
  insertFeeds(feeds: NewFeed[]): number {
    let last = 0;
    for (let at = 0; at < feeds.length; ) {
      const size = INSERT_GROUPS.find((n) => n <= feeds.length - at)!;
      const createdAt = feeds[at].createdAt;
      let shared = true;
      for (let i = at + 1; i < at + size && shared; i++) shared = feeds[i].createdAt === createdAt;
      const values: (number | string)[] = [];
      for (let i = at; i < at + size; i++) {
        values.push(feeds[i].resource, feeds[i].rawData);
        if (!shared) values.push(feeds[i].createdAt);
      }
      const statement = this.insertStatement(size, shared);
      last = Number((shared ? statement.run(values, { createdAt }) : statement.run(values)).lastInsertRowid);
      at += size;
    }
    return last - feeds.length + 1;
  }

  // By row count, not by text: a chunk of a batch looks its statement up without building its SQL again.
  private insertStatement(rows: number, sharedTime: boolean): Database.Statement<unknown[]> {
    const cache = sharedTime ? this.inserts : this.timedInserts;
    let statement = cache.get(rows);
    if (statement === undefined) {
      const row = sharedTime ? '(?, ?, @createdAt)' : '(?, ?, ?)';
      statement = this.db.prepare(`INSERT INTO feeds (id_resource, raw_data, created_at) VALUES ${Array(rows).fill(row).join(', ')}`);
      cache.set(rows, statement);
    }
    return statement;
  }

  private statement(sql: string): Database.Statement<unknown[]> {
    let statement = this.prepared.get(sql);
    if (statement === undefined) {
      statement = this.db.prepare(sql);
      this.prepared.set(sql, statement);
    }
    return statement;
  }

  /** Counts one request against the resource; see Touch. */
  touch(resource: number, t: Touch): void {
    this.statements.touch.run({ ...t, id: resource });
  }

  /** Adds the size of a response that shows the resource's counters, once that size is known. */
  addIncome(resource: number, bytes: number): void {
    this.statements.addIncome.run(bytes, resource);
  }

  resourceRow(id: number): ResourceRow | undefined {
    return this.statements.resource.get(id);
  }

  firstFeed(resource: number): Feed | undefined {
    return this.statements.firstFeed.get(resource);
  }

  lastFeed(resource: number): Feed | undefined {
    return this.statements.lastFeed.get(resource);
  }

  feed(id: number): Feed | undefined {
    return this.statements.feed.get(id);
  }

  /** One page of a resource's feeds in time order (FEED_PAGE_SQL); reading changes nothing. */
  feedPage(resource: number, range: FeedRange): FeedRow[] {
    const asc = range.order === 'asc';
    // The bound of the window's own end, and the cursor's when it lies inside the window.
    const edge = asc ? { at: range.from, id: 0 } : { at: range.to, id: Number.MAX_SAFE_INTEGER };
    const cursor = range.after === null ? null : { at: range.after.created_at, id: range.after.id_resource_feed };
    const inside = cursor !== null && (asc ? cursor.at >= range.from : cursor.at <= range.to);
    const bounds = { resource, ...(inside ? cursor : edge), from: range.from, to: range.to, since: range.since, limit: range.limit };
    return (asc ? this.statements.pageAsc : this.statements.pageDesc).all(bounds);
  }

  /**
   * Stores a feed the platform itself writes (the dashboard), not a device: no counter, no presence;
   * `stamp` (now) becomes the resource's `updated_at`.
   */
  platformFeed(row: NewFeed, stamp: string): number {
    return this.transaction(() => {
      const feed = this.insertFeeds([row]);
      this.statements.platformWrote.run({ id: row.resource, feed, stamp });
      return feed;
    });
  }

  /**
   * One page of the devices, in the order they were first seeded (`limit` of them after the first
   * `offset`), each with its resource ids in increasing order; and how many devices there are in all.
   */
  devicePage(offset: number, limit: number): { total: number; devices: (DeviceListing & { resources: number[] })[] } {
    const devices = this.statements.devicePage.all(limit, offset).map((d) => ({ ...d, resources: this.resourcesOf.get(d.id_device) ?? [] }));
    return { total: this.devices.size, devices };
  }

  /**
   * Stores the seed's subtypes, devices and resources, keeping what is already there (feeds, counters,
   * ids): a record changes, and its `updated_at` moves, only where the seed differs from it.
   */
  applySeed(seed: Seed, stamp: string): void {
    const deviceId = this.db.prepare<[string], { id_device: number }>('SELECT id_device FROM devices WHERE public_key = ?');
    const owner = this.db.prepare<[number], { public_key: string }>(
      'SELECT d.public_key FROM resources r JOIN devices d USING (id_device) WHERE r.id_resource = ?',
    );
    this.transaction(() => {
      for (const s of seed.subtypes) this.upsert('subtypes', 'id_resource_subtype', { ...s }, stamp);
      for (const d of seed.devices) {
        this.upsert('devices', 'public_key', { public_key: d.public_key, token_sha256: tokenDigest(d.token), name: d.name }, stamp);
        const { id_device } = deviceId.get(d.public_key)!;
        for (const r of d.resources) {
          const existing = owner.get(r.id_resource);
          if (existing !== undefined && existing.public_key !== d.public_key) {
            throw new SeedError(`seed: resource ${r.id_resource} already belongs to device ${existing.public_key} in the database`);
          }
          this.upsert('resources', 'id_resource', { ...r, id_device }, stamp);
        }
      }
    });
    this.loadCatalog();
    this.commandTypes = new Set(seed.command_types);
  }

  private upsert(table: string, key: string, row: Record<string, unknown>, stamp: string): void {
    const columns = Object.keys(row);
    const existing = this.statement(`SELECT * FROM ${table} WHERE ${key} = ?`).get(row[key]) as Record<string, unknown> | undefined;
    if (existing === undefined) {
      const all = [...columns, 'created_at', 'updated_at'];
      this.statement(`INSERT INTO ${table} (${all.join(', ')}) VALUES (${all.map(() => '?').join(', ')})`).run(...columns.map((c) => row[c]), stamp, stamp);
    } else if (columns.some((c) => !same(existing[c], row[c]))) {
      this.statement(`UPDATE ${table} SET ${columns.map((c) => c + ' = ?').join(', ')}, updated_at = ? WHERE ${key} = ?`).run(...columns.map((c) => row[c]), stamp, row[key]);
    }
  }

  private migrate(file: string | undefined): void {
    const version = this.db.pragma('user_version', { simple: true }) as number;
    if (version !== SCHEMA_VERSION && version !== 0) {
      throw new Error(`database ${file} has schema version ${version}; this service knows ${SCHEMA_VERSION}`);
    }
    this.db.transaction(() => {
      if (version === 0) {
        this.db.exec(SCHEMA);
        this.db.pragma(`user_version = ${SCHEMA_VERSION}`);
      }
      this.db.exec(FEED_INDEX);
    })();
  }

  private loadCatalog(): void {
    const subtypes = new Map<number, SubtypeEntry>();
    for (const record of this.db.prepare(`SELECT ${SUBTYPE_COLUMNS} FROM subtypes`).all() as Subtype[]) {
      subtypes.set(record.id_resource_subtype, { record, restriction: compileRestriction(record) });
    }
    const devices = new Map<string, DeviceEntry>();
    const rows = this.db.prepare('SELECT id_device, public_key, token_sha256 FROM devices').all() as {
      id_device: number;
      public_key: string;
      token_sha256: Buffer;
    }[];
    for (const row of rows) devices.set(row.public_key, { id: row.id_device, publicKey: row.public_key, tokenDigest: row.token_sha256 });
    const resources = new Map<number, ResourceEntry>();
    const resourcesOf = new Map<number, number[]>();
    const resourceRows = this.db.prepare('SELECT id_resource, id_device, id_resource_subtype FROM resources ORDER BY id_resource').all() as {
      id_resource: number;
      id_device: number;
      id_resource_subtype: number;
    }[];
    for (const row of resourceRows) {
      resources.set(row.id_resource, { id: row.id_resource, deviceId: row.id_device, subtype: subtypes.get(row.id_resource_subtype)! });
      // One pass, the rows in id order: each device's list comes out sorted.
      const own = resourcesOf.get(row.id_device);
      if (own === undefined) resourcesOf.set(row.id_device, [row.id_resource]);
      else own.push(row.id_resource);
    }
    this.devices = devices;
    this.resources = resources;
    this.resourcesOf = resourcesOf;
  }
}

function same(a: unknown, b: unknown): boolean {
  return Buffer.isBuffer(a) && Buffer.isBuffer(b) ? a.equals(b) : a === b;
}
