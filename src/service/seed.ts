// The seed file (docs/service.md): the subtypes, devices and resources the service starts with. Checked in
// full before anything is stored; the first problem found is thrown as one sentence naming the field.
import { compileRestriction } from '../core/wire/validate';
import type { Subtype } from '../core/wire/wire';
import { JsonTextError, parseJsonText } from './json-text';

/** A subtype as seeded: the record of docs/interface.md §2.3 without its timestamps, which the service sets. */
export type SeedSubtype = Omit<Subtype, 'created_at' | 'updated_at'>;

export interface SeedResource {
  id_resource: number;
  id_resource_subtype: number;
  name: string;
  description: string;
  /** Minutes (docs/interface.md, Presence). */
  lifetime: number;
}

export interface SeedDevice {
  public_key: string;
  /** Stored only as a SHA-256 digest. */
  token: string;
  name: string;
  resources: SeedResource[];
}

export interface Seed {
  subtypes: SeedSubtype[];
  devices: SeedDevice[];
  /**
   * The resource types (`id_resource_type`) whose resources take commands: their last feed is a command
   * for the device, and the dashboard offers to write one. Ours, not the interface's (docs/interface.md,
   * Commands); none when absent.
   */
  command_types?: number[];
}

export class SeedError extends Error {
  override name = 'SeedError';
}

/** Parses and checks the text of a seed file. */
export function parseSeed(text: string): Seed {
  let value: unknown;
  try {
    value = parseJsonText(text);
  } catch (e) {
    throw e instanceof JsonTextError ? new SeedError('seed: ' + e.message) : e;
  }
  return checkSeed(value);
}

// The public key stands in a URL path unescaped, so it is limited to the unreserved characters.
const PUBLIC_KEY = /^[A-Za-z0-9._~-]{1,128}$/;
// A bearer token is visible ASCII without spaces (RFC 6750 allows less; this is enough to be sent as is).
const TOKEN = /^[\x21-\x7e]{1,512}$/;
const MAX_RANGE = Number.MAX_SAFE_INTEGER;

/** Checks a seed given as a value (a parsed file or an object built in code) and returns it normalised. */
export function checkSeed(value: unknown): Seed {
  const root = fields(value, 'seed', ['subtypes', 'devices'], ['command_types']);
  const subtypes = list(root, 'subtypes', 'seed').map((item, i) => checkSubtype(item, `subtypes[${i}]`));
  const devices = list(root, 'devices', 'seed').map((item, i) => checkDevice(item, `devices[${i}]`));
  const commandTypes = root.command_types === undefined ? [] : list(root, 'command_types', 'seed').map((item, i) => checkType(item, `command_types[${i}]`));

  const subtypeIds = new Set<number>();
  subtypes.forEach((s, i) => {
    if (subtypeIds.has(s.id_resource_subtype)) fail(`subtypes[${i}].id_resource_subtype ${s.id_resource_subtype} appears twice`);
    subtypeIds.add(s.id_resource_subtype);
  });
  const keys = new Set<string>();
  const resourceIds = new Set<number>();
  devices.forEach((d, i) => {
    if (keys.has(d.public_key)) fail(`devices[${i}].public_key ${JSON.stringify(d.public_key)} appears twice`);
    keys.add(d.public_key);
    d.resources.forEach((r, j) => {
      const where = `devices[${i}].resources[${j}]`;
      if (resourceIds.has(r.id_resource)) fail(`${where}.id_resource ${r.id_resource} appears twice`);
      resourceIds.add(r.id_resource);
      if (!subtypeIds.has(r.id_resource_subtype)) {
        fail(`${where}.id_resource_subtype ${r.id_resource_subtype} is not among the seed's subtypes`);
      }
    });
  });
  return { subtypes, devices, command_types: commandTypes };
}

function checkSubtype(value: unknown, where: string): SeedSubtype {
  const o = fields(
    value,
    where,
    ['id_resource_subtype', 'id_resource_type', 'name', 'data_restriction_begin_range', 'data_restriction_end_range'],
    ['name_i18n', 'description', 'data_format_operation', 'data_restriction_regex'],
  );
  const name = text(o, 'name', where);
  const subtype: SeedSubtype = {
    id_resource_subtype: integer(o, 'id_resource_subtype', where, 1),
    id_resource_type: integer(o, 'id_resource_type', where, 1),
    name,
    name_i18n: o.name_i18n === undefined ? name : text(o, 'name_i18n', where),
    description: o.description === undefined || o.description === null ? null : text(o, 'description', where),
    data_format_operation: o.data_format_operation === undefined ? 0 : integer(o, 'data_format_operation', where, 0),
    data_restriction_regex:
      o.data_restriction_regex === undefined || o.data_restriction_regex === null ? null : text(o, 'data_restriction_regex', where),
    data_restriction_begin_range: integer(o, 'data_restriction_begin_range', where, -MAX_RANGE),
    data_restriction_end_range: integer(o, 'data_restriction_end_range', where, -MAX_RANGE),
  };
  if (subtype.data_restriction_begin_range > subtype.data_restriction_end_range) {
    fail(`${where}.data_restriction_begin_range is greater than data_restriction_end_range`);
  }
  try {
    compileRestriction(subtype);
  } catch (error) {
    fail(`${where}.data_restriction_regex does not compile: ${(error as Error).message}`);
  }
  return subtype;
}

function checkType(value: unknown, where: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) fail(`${where} must be an integer ≥ 1 (an id_resource_type)`);
  return value;
}

function checkDevice(value: unknown, where: string): SeedDevice {
  const o = fields(value, where, ['public_key', 'token', 'resources'], ['name']);
  const publicKey = text(o, 'public_key', where);
  if (!PUBLIC_KEY.test(publicKey)) fail(`${where}.public_key must be 1 to 128 of the characters A-Z a-z 0-9 . _ ~ -`);
  const token = text(o, 'token', where);
  // The message never shows the token itself.
  if (!TOKEN.test(token)) fail(`${where}.token must be 1 to 512 visible ASCII characters without spaces`);
  return {
    public_key: publicKey,
    token,
    name: o.name === undefined ? '' : text(o, 'name', where),
    resources: list(o, 'resources', where).map((item, j) => checkResource(item, `${where}.resources[${j}]`)),
  };
}

function checkResource(value: unknown, where: string): SeedResource {
  const o = fields(value, where, ['id_resource', 'id_resource_subtype', 'name', 'lifetime'], ['description']);
  return {
    id_resource: integer(o, 'id_resource', where, 1),
    id_resource_subtype: integer(o, 'id_resource_subtype', where, 1),
    name: text(o, 'name', where),
    description: o.description === undefined ? '' : text(o, 'description', where),
    lifetime: integer(o, 'lifetime', where, 0),
  };
}

type Fields = Record<string, unknown>;

/** An object with every required field and no field outside `required` and `optional`. */
function fields(value: unknown, where: string, required: string[], optional: string[]): Fields {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(`${where} must be an object`);
  const o = value as Fields;
  for (const key of required) if (o[key] === undefined) fail(`${where}.${key} is missing`);
  for (const key of Object.keys(o)) {
    if (!required.includes(key) && !optional.includes(key)) fail(`${where}.${key} is not a field of the seed format`);
  }
  return o;
}

function list(o: Fields, key: string, where: string): unknown[] {
  const value = o[key];
  if (!Array.isArray(value)) fail(`${where}.${key} must be an array`);
  return value as unknown[];
}

function integer(o: Fields, key: string, where: string, min: number): number {
  const value = o[key];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    fail(`${where}.${key} must be an integer${min === 0 ? ' ≥ 0' : min === 1 ? ' ≥ 1' : ''}`);
  }
  return value as number;
}

function text(o: Fields, key: string, where: string): string {
  const value = o[key];
  if (typeof value !== 'string') fail(`${where}.${key} must be a string`);
  return value as string;
}

function fail(message: string): never {
  throw new SeedError('seed: ' + message);
}
