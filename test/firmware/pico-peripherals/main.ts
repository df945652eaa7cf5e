// The firmware as pico.test.ts runs it in rp2040js: the firmware's own prepare and run, with every reading
// traced as the agent takes it ("reading <resource> <value>"), and commands from UART1 (GP8 transmit,
// GP9 receive), one a line, "<resource> <value>", handed to the output's handler as the agent hands it a
// command from the platform: the pin path after it is the real one.
import config from 'mc/config';
import Serial from 'embedded:io/serial';
import type { Feed } from '../../../src/core/wire/wire';
import { prepare, run } from '../../../platforms/moddable/firmware/main';

export default function main(): void {
  const firmware = prepare(config);
  if (firmware === undefined) return;
  firmware.sensors = firmware.sensors.map((sensor) => ({
    ...sensor,
    read: () => {
      const value = sensor.read();
      trace('reading ' + sensor.resource + ' ' + String(value) + '\n');
      return value;
    },
  }));
  run(firmware);
  let line = '';
  let feed = 0;
  const uart = new Serial({
    transmit: 8,
    receive: 9,
    baud: 115200,
    format: 'number',
    onReadable(this: Serial, count: number) {
      while (count-- > 0) {
        const c = String.fromCharCode(this.read() as number);
        if (c !== '\n') {
          line += c;
          continue;
        }
        const [resource, value] = line.split(' ');
        line = '';
        const output = firmware.actuators.find((a) => a.resource === Number(resource));
        try {
          if (output === undefined) throw new Error('no output on resource ' + resource);
          void output.handle(value, { id_resource_feed: ++feed } as Feed);
        } catch (e) {
          trace('uart: ' + String(e) + '\n');
        }
      }
    },
  } as ConstructorParameters<typeof Serial>[0]);
  void uart;
}
