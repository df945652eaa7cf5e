// Opens what a checked description names and gives the agent its sensors and actuators. What the board
// refuses when it is opened (a pin its IO class will not take, an address the bus holds) is one more
// problem of the description, said on the same line; the rest run.
import type { ActuatorConfig, SensorConfig } from '../../../src/core/config';
import { errorText } from '../../../src/core/wire/errors';
import type { SampleValue } from '../../../src/core/host/host';
import type { Board } from './board';
import type { BoardReading, Output, Peripheral } from './description';
import { isSource } from './description';
import { BusRefused, I2cSensor } from './i2c-sensor';
import type { DriverClass } from './i2c-sensor';
import { openAnalog, openDigital, openPulses, rounded } from './inputs';
import { openPwm, openRelay } from './outputs';
import type { OpenOutput } from './outputs';

export interface Wiring {
  board: Board | null;
  /** The driver class of a module the description's check resolved (embedded:sensor/…). */
  importDriver(module: string): DriverClass;
  /** Monotonic ms. */
  now(): number;
  /** One line of the trace, without its prefix. */
  say(text: string): void;
  /** A board reading's reader, or why this board has none. */
  boardReading(reading: BoardReading): (() => number) | string;
}

export type Recorder = (resource: number, value: SampleValue) => void;

export interface Peripherals {
  sensors: SensorConfig[];
  actuators: ActuatorConfig[];
  /** The outputs' state resources, which the agent must know to accept what `begin` and each command report. */
  resources: number[];
  problems: string[];
  /** Board readings this board has not, each with why. */
  skipped: string[];
  /** The entries that run, as the description names them. */
  names: string[];
  /** The I2C sensors that do not answer now, as the trace names them. */
  notAnswering(): string[];
  /** Once the agent exists: reports every output's level at boot, and from then on each one applied. */
  begin(record: Recorder): void;
}

export function openPeripherals(list: Peripheral[], w: Wiring): Peripherals {
  const sensors: SensorConfig[] = [];
  const actuators: ActuatorConfig[] = [];
  const problems: string[] = [];
  const skipped: string[] = [];
  const i2c: I2cSensor[] = [];
  const outputs: { p: Output; out: OpenOutput }[] = [];
  const recorder: Recorder[] = [];
  const names: string[] = [];
  for (const p of list) {
    try {
      if (isSource(p)) {
        const read = openSource(p, w, i2c);
        if (typeof read === 'string') {
          skipped.push(p.name + ' (' + read + ')');
          continue;
        }
        sensors.push({ resource: p.resource, every: p.every, read });
      } else {
        const out = p.type === 'relay' ? openRelay(p, w.board as Board) : openPwm(p, w.board as Board);
        outputs.push({ p, out });
        actuators.push({
          resource: p.resource,
          every: p.every,
          handle: (value, feed) => {
            const level = out.apply(value);
            w.say(p.name + ': pin ' + p.pin + ' at ' + level + ' by command ' + JSON.stringify(value) + ' (feed ' + feed.id_resource_feed + ')');
            if (p.state !== 0 && recorder.length > 0) recorder[0](p.state, level);
          },
        });
      }
      names.push(p.name);
    } catch (e) {
      problems.push(p.name + ': ' + (e instanceof BusRefused ? 'the I2C bus refused it: ' : '') + errorText(e));
    }
  }
  return {
    sensors,
    actuators,
    resources: outputs.filter((o) => o.p.state !== 0).map((o) => o.p.state),
    problems,
    skipped,
    names,
    notAnswering: () => i2c.filter((s) => !s.answering).map((s) => s.label),
    begin: (record) => {
      recorder.push(record);
      for (const { p, out } of outputs) if (p.state !== 0) record(p.state, out.level);
    },
  };
}

/** A source's reader; for a board reading this board has not, why. */
function openSource(p: Peripheral & { type: 'digital' | 'analog' | 'pulses' | 'i2c' | 'board' }, w: Wiring, i2c: I2cSensor[]): (() => number) | string {
  const board = w.board as Board;
  switch (p.type) {
    case 'digital':
      return openDigital(p, board, w.now).read;
    case 'analog':
      return openAnalog(p, board).read;
    case 'pulses':
      return openPulses(p, board, w.now).read;
    case 'i2c': {
      let sensor = i2c.find((s) => s.serves(p));
      if (sensor === undefined) {
        sensor = new I2cSensor(p, w.importDriver(p.driver), board, w.now, w.say);
        sensor.open();
        i2c.push(sensor);
      }
      sensor.holdMs = Math.min(sensor.holdMs, p.every / 2);
      return sensor.reader(p);
    }
    default: {
      const read = w.boardReading(p.reading);
      if (typeof read === 'string') return read;
      const decimals = p.decimals;
      return () => rounded(read(), decimals);
    }
  }
}
