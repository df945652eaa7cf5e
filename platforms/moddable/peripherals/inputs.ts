// The sources read from pins: a digital input (debounced), an analog input (scaled to a unit), a pulse
// counter (a total or a rate). Each is opened once at boot; a reading allocates nothing.
import type { Board, Readable } from './board';
import type { AnalogInput, DigitalInput, PulseInput } from './description';

export interface Opened {
  read(): number;
  io: Readable;
}

/** `value` rounded to `decimals` places; -1 leaves it as read. */
export function rounded(value: number, decimals: number): number {
  if (decimals < 0) return value;
  const scale = Math.pow(10, decimals);
  return Math.round(value * scale) / scale;
}

/**
 * 1 or 0. With a debounce, a level counts once no edge came for `debounce` ms: while a contact bounces,
 * the level it had before is read. Boards that cannot tell edges read the pin as it is.
 */
export function openDigital(p: DigitalInput, board: Board, now: () => number): Opened {
  const edge = new Float64Array(1).fill(-Infinity);
  const io = board.input({ pin: p.pin, pull: p.pull, inverted: p.inverted, onChange: p.debounce > 0 ? () => void (edge[0] = now()) : undefined });
  const held = new Uint8Array(1).fill(io.read());
  const debounce = p.debounce;
  return {
    io,
    read: () => {
      const level = io.read();
      if (now() - edge[0] >= debounce) held[0] = level;
      return held[0];
    },
  };
}

/** raw × scale + offset, raw from 0 to 2^resolution − 1 as the board's ADC gives it. */
export function openAnalog(p: AnalogInput, board: Board): Opened {
  const io = board.analog(p.pin);
  const { scale, offset, decimals } = p;
  return { io, read: () => rounded(io.read() * scale + offset, decimals) };
}

/**
 * 'total': pulses × perPulse since the firmware started. 'rate': units per `per` ms over the time since the
 * reading before (the first: since the counter opened).
 */
export function openPulses(p: PulseInput, board: Board, now: () => number): Opened {
  const io = board.counter({ pin: p.pin, pull: p.pull, edge: p.edge });
  const { perPulse, per, decimals } = p;
  if (p.report === 'total') return { io, read: () => rounded(io.read() * perPulse, decimals) };
  // The count and the time of the reading before: [count, ms].
  const before = new Float64Array([io.read(), now()]);
  return {
    io,
    read: () => {
      const count = io.read(), at = now();
      const value = ((count - before[0]) * perPulse * per) / Math.max(1, at - before[1]);
      before[0] = count;
      before[1] = at;
      return rounded(value, decimals);
    },
  };
}
