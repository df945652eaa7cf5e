// `feed-agent provision`: a device's identity and network as the file its chip's preference store is
// written from, so that one firmware image serves a fleet (docs/firmware.md, "A fleet"). One device from
// options, or a fleet's CSV, one file per row. Every problem is one line naming the field (and the CSV's
// line); nothing is written until everything is right. The token is never printed.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkIdentity, IDENTITY_FIELDS } from '../provision/identity';
import type { Identity } from '../provision/identity';
import { parseFleetCsv } from '../provision/fleet-csv';
import { TARGETS } from '../provision/targets';
import { parseOptions, UsageError } from './usage';

const HELP = `usage: feed-agent provision [--target esp32|pico] --publicKey KEY --token TOKEN [fields] [--out FILE]
       feed-agent provision [--target esp32|pico] --fleet FLEET.csv --out DIR

Writes what a device's preference store holds, for a firmware built once for the whole fleet:
  --target esp32   an NVS partition image (default), written to the board with
                   esptool.py --chip esp32 write_flash 0x9000 FILE
  --target pico    a UF2 file of the Pico W's preference sectors, copied to the board in BOOTSEL mode

Fields (each also a column of FLEET.csv, whose first row names its columns):
  --publicKey KEY  the device's public key: 24 hexadecimal digits
  --token TOKEN    its token: 24 hexadecimal digits (or the environment's FEED_AGENT_TOKEN)
  --url URL        the service: http(s)://host[:port][/path] (default: the build's url)
  --resources IDS  the device's resource ids by role, as the firmware's resources key: uptime:201,heap:202
  --ssid SSID      the Wi-Fi network (at most 32 bytes), and --password PASSWORD (8 to 63 characters)
  --ca NAME        the DER resource of a private CA in the image (e.g. my-root.der)
  --update URL     where the device looks for firmware updates (ESP32; e.g. http://host/firmware)

  --out FILE|DIR   the file for one device (default ./<publicKey>.nvs.bin or .uf2), the folder for a fleet

A stored field wins over the build's mcconfig key of the same name. Exit status 2 on bad input, with one
line per problem; nothing is written then.`;

/** Each problem on a line of its own, each line saying whose it is, as main prints the first. */
const NEXT_LINE = '\nfeed-agent provision: ';

export const provision = {
  summary: 'write a device\'s identity for its preference store (one image, many devices)',
  run: runProvision,
};

async function runProvision(args: string[]): Promise<void> {
  const values = parseOptions('provision', args, {
    target: { type: 'string', default: 'esp32' },
    fleet: { type: 'string' },
    out: { type: 'string' },
    publicKey: { type: 'string' },
    token: { type: 'string' },
    url: { type: 'string' },
    resources: { type: 'string' },
    ssid: { type: 'string' },
    password: { type: 'string' },
    ca: { type: 'string' },
    update: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help === true) {
    console.log(HELP);
    return;
  }
  if (values.target !== 'esp32' && values.target !== 'pico') throw new UsageError(`--target must be esp32 or pico, not ${JSON.stringify(values.target)}`);
  const target = TARGETS[values.target];
  const given = IDENTITY_FIELDS.filter((f) => values[f] !== undefined);
  let devices: { where: string; identity: Identity }[];
  if (values.fleet !== undefined) {
    if (given.length > 0) throw new UsageError(`--fleet gives every field; --${given[0]} cannot be combined with it`);
    if (values.out === undefined) throw new UsageError('--fleet needs --out DIR, the folder for its files');
    let text: string;
    try {
      text = readFileSync(values.fleet, 'utf8');
    } catch (e) {
      throw new UsageError(`--fleet ${values.fleet}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
    }
    const fleet = parseFleetCsv(text, values.fleet);
    if (fleet.problems !== undefined) throw new UsageError(fleet.problems.join(NEXT_LINE));
    devices = fleet.devices.map((d) => ({ where: values.fleet + ' line ' + d.line + ': ', identity: d.identity }));
  } else {
    const fields: Record<string, string | undefined> = {};
    for (const f of IDENTITY_FIELDS) fields[f] = values[f];
    fields.token ??= process.env.FEED_AGENT_TOKEN || undefined;
    const checked = checkIdentity(fields);
    if (checked.problems !== undefined) throw new UsageError(checked.problems.join(NEXT_LINE));
    devices = [{ where: '', identity: checked.identity }];
  }
  const problems = devices.flatMap((d) => target.problems(d.identity).map((p) => d.where + p));
  if (problems.length > 0) throw new UsageError(problems.join(NEXT_LINE));
  const files = devices.map((d) => ({
    identity: d.identity,
    file: values.fleet !== undefined ? join(values.out!, d.identity.publicKey + target.suffix) : (values.out ?? d.identity.publicKey + target.suffix),
  }));
  if (values.fleet !== undefined) mkdirSync(values.out!, { recursive: true });
  for (const { identity, file } of files) {
    writeFileSync(file, target.bytes(identity));
    const named = Object.keys(identity).filter((k) => k !== 'publicKey');
    console.log(`${file}: ${identity.publicKey}, with ${named.join(', ')}`);
  }
  console.log(files.length === 1 ? `put it on the board: ${target.howToFlash(files[0].file)}` : `put each on its board: ${target.howToFlash('<file>')}`);
}
