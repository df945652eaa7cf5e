// A reading out of an MQTT payload: the whole payload (a number, or else text), or one field of a JSON
// object. A payload that gives no reading says why, for the once-per-topic log line.

export type Reading = { value: number | boolean | string } | { problem: string };

const NUMBER = /^\s*-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;

export function readPayload(payload: Uint8Array, field: string | undefined): Reading {
  const text = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('utf8');
  if (field === undefined) {
    if (text.trim() === '') return { problem: 'empty payload' };
    return { value: scalar(text) };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { problem: `payload is not JSON (field "${field}" wanted): ${preview(text)}` };
  }
  let at: unknown = json;
  for (const key of field.split('.')) {
    if (typeof at !== 'object' || at === null || !Object.hasOwn(at, key)) return { problem: `JSON payload has no field "${field}": ${preview(text)}` };
    at = (at as Record<string, unknown>)[key];
  }
  if (typeof at === 'number' || typeof at === 'boolean') return { value: at };
  if (typeof at === 'string') return { value: scalar(at) };
  return { problem: `field "${field}" is ${at === null ? 'null' : Array.isArray(at) ? 'an array' : 'an object'}, not a number, boolean or text` };
}

function preview(text: string): string {
  return JSON.stringify(text.length > 60 ? text.slice(0, 60) + '…' : text);
}

/** Text as a reading: a number where it is one, true/false as booleans, else the text itself. */
function scalar(text: string): number | boolean | string {
  if (NUMBER.test(text)) return Number(text);
  const t = text.trim();
  return t === 'true' ? true : t === 'false' ? false : text;
}
