// A fleet's CSV: a header row naming the fields (identity.ts), then one row per device. Quoted fields
// (RFC 4180) may hold commas and quotes. Every problem names its line and field; nothing is provisioned
// until the whole file is right.
import { checkIdentity, IDENTITY_FIELDS } from './identity';
import type { Identity } from './identity';

export interface FleetDevice {
  /** The file's line the device's row starts on, for messages. */
  line: number;
  identity: Identity;
}

export type FleetResult = { devices: FleetDevice[]; problems?: undefined } | { problems: string[] };

export function parseFleetCsv(text: string, name: string): FleetResult {
  const rows = csvRows(text);
  if ('problem' in rows) return { problems: [name + ': ' + rows.problem] };
  const [header, ...body] = rows.rows.filter((r) => !(r.cells.length === 1 && r.cells[0].trim() === ''));
  if (header === undefined) return { problems: [name + ': empty (expected a header row: ' + IDENTITY_FIELDS.join(',') + ')'] };
  const columns = header.cells.map((c) => c.trim());
  const problems: string[] = [];
  const unknown = columns.filter((c) => !(IDENTITY_FIELDS as readonly string[]).includes(c));
  if (unknown.length > 0) problems.push(name + ' line ' + header.line + ': unknown column' + (unknown.length > 1 ? 's ' : ' ') + unknown.map((c) => '"' + c + '"').join(', ') + ' (columns: ' + IDENTITY_FIELDS.join(', ') + ')');
  const twice = columns.filter((c, i) => columns.indexOf(c) !== i);
  if (twice.length > 0) problems.push(name + ' line ' + header.line + ': column ' + twice[0] + ' given twice');
  if (problems.length > 0) return { problems };
  const devices: FleetDevice[] = [];
  const seen = new Map<string, number>();
  for (const row of body) {
    if (row.cells.length !== columns.length) {
      problems.push(name + ' line ' + row.line + ': ' + row.cells.length + ' fields, the header has ' + columns.length);
      continue;
    }
    const checked = checkIdentity(Object.fromEntries(columns.map((c, i) => [c, row.cells[i].trim()])));
    if (checked.problems !== undefined) {
      for (const p of checked.problems) problems.push(name + ' line ' + row.line + ': ' + p);
      continue;
    }
    const key = checked.identity.publicKey.toUpperCase();
    const first = seen.get(key);
    if (first !== undefined) problems.push(name + ' line ' + row.line + ': publicKey ' + checked.identity.publicKey + ' is also on line ' + first);
    else seen.set(key, row.line);
    devices.push({ line: row.line, identity: checked.identity });
  }
  if (problems.length > 0) return { problems };
  if (devices.length === 0) return { problems: [name + ': a header and no device'] };
  return { devices };
}

interface Row {
  line: number;
  cells: string[];
}

/** The rows of `text`, each with the line it starts on. */
function csvRows(text: string): { rows: Row[] } | { problem: string } {
  const rows: Row[] = [];
  let cells: string[] = [];
  let cell = '';
  let line = 1;
  let start = 1;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (c === '"') quoted = false;
      else {
        if (c === '\n') line++;
        cell += c;
      }
    } else if (c === '"' && cell === '') quoted = true;
    else if (c === ',') cells.push(cell), (cell = '');
    else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      cells.push(cell);
      rows.push({ line: start, cells });
      (cells = []), (cell = '');
      start = ++line;
    } else cell += c;
  }
  if (quoted) return { problem: 'a quote opened on line ' + start + ' is never closed' };
  if (cell !== '' || cells.length > 0) rows.push({ line: start, cells: [...cells, cell] });
  return { rows };
}
