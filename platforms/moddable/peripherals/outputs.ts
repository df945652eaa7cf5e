// The outputs a command resource drives: a relay (a digital output: the command's value is mapped to a
// level) and PWM (a setpoint, mapped to a duty). Each starts in its stated level at boot; each command is
// applied once (the core hands over each new command once) and the level applied is reported on the
// entry's `state` resource, so that the platform sees what the pin did, not only what was asked.
import type { SampleValue } from '../../../src/core/host/host';
import type { Board, Closable } from './board';
import type { PwmOutput, RelayOutput } from './description';

export interface OpenOutput {
  io: Closable;
  /** Applies a command's value and answers the level applied; throws when the value means no level. */
  apply(value: SampleValue): number;
  /** The level it is in now: `initial` until a command came. */
  readonly level: number;
}

export function openRelay(p: RelayOutput, board: Board): OpenOutput {
  const io = board.output({ pin: p.pin, inverted: p.inverted, initial: p.initial });
  const levels = p.levels;
  const now = new Uint8Array(1).fill(p.initial);
  return {
    io,
    get level() {
      return now[0];
    },
    apply: (value) => {
      const level = levels[String(value).toLowerCase()];
      if (level === undefined) throw new Error(p.name + ': command ' + JSON.stringify(value) + ' is none of ' + Object.keys(levels).join(', '));
      io.write(level);
      now[0] = level;
      return level;
    },
  };
}

/** A setpoint from min to max is a duty from 0 to 100 %; one beyond is clamped, and the clamped one reported. */
export function openPwm(p: PwmOutput, board: Board): OpenOutput {
  const io = board.pwm({ pin: p.pin, hz: p.hz });
  const { min, max } = p;
  const top = Math.pow(2, io.resolution) - 1;
  const now = new Float64Array(1);
  const set = (setpoint: number): number => {
    const s = Math.min(max, Math.max(min, setpoint));
    io.write(Math.round(((s - min) / (max - min)) * top));
    now[0] = s;
    return s;
  };
  set(p.initial);
  return {
    io,
    get level() {
      return now[0];
    },
    apply: (value) => {
      const setpoint = typeof value === 'boolean' ? (value ? max : min) : Number(value);
      if (!isFinite(setpoint) || value === '') throw new Error(p.name + ': command ' + JSON.stringify(value) + ' is not a number');
      return set(setpoint);
    },
  };
}
