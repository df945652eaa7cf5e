import { describe, expect, it } from 'vitest';
import {
  DROPPED_NEW,
  PUSHED,
  PUSHED_EVICTED,
  SampleQueue,
  TOO_LARGE,
  type OverflowPolicy,
  type QueueOptions,
} from '../../src/core/queue/queue';
import { FIRST_SLOTS } from '../../src/core/queue/lent-memory';
import { createRandom } from '../../src/core/host/random';
import { asciiRead, utf8Length, utf8Read, utf8Write } from '../../src/core/wire/utf8';
import type { SampleValue } from '../../src/core/host/host';
import { encode, push, take } from '../support/queue-body';

/** The time of the fast lane's samples; `push` takes its own. */
const clock = { now: (): number => 0 };

const make = (o: Partial<QueueOptions> = {}): SampleQueue =>
  new SampleQueue({ capacity: 4, overflow: 'drop-oldest', stringBytes: 0, withSeq: false, clock, ...o });

const values = (q: SampleQueue): SampleValue[] => Array.from({ length: q.length }, (_, i) => q.valueAt(i));
const resources = (q: SampleQueue): number[] => Array.from({ length: q.length }, (_, i) => q.resourceAt(i));
const naive = (samples: { resource: number; value: SampleValue }[]): string =>
  JSON.stringify(samples.map((s) => ({ id_resource: s.resource, input: s.value })));
// What a string reads back as: lone surrogates become U+FFFD, as with TextEncoder.
const wellFormed = (s: string): string => new TextDecoder('utf-8', { ignoreBOM: true }).decode(new TextEncoder().encode(s));

describe('SampleQueue basics', () => {
  it('keeps FIFO order many times around the ring', () => {
    const q = make({ capacity: 5, withSeq: true });
    let next = 0;
    let expected = 0;
    for (let round = 0; round < 200; round++) {
      const pushes = 1 + (round % 5);
      for (let k = 0; k < pushes && q.length < 5; k++, next++) {
        expect(push(q, 1 + (next % 3), next * 0.5, 1000 + next, next)).toBe(PUSHED);
      }
      const take = 1 + ((round * 7) % q.length);
      for (let i = 0; i < take; i++) {
        expect(q.valueAt(i)).toBe((expected + i) * 0.5);
        expect(q.resourceAt(i)).toBe(1 + ((expected + i) % 3));
        expect(q.atAt(i)).toBe(1000 + expected + i);
        expect(q.seqAt(i)).toBe(expected + i);
      }
      expect(q.oldestAt()).toBe(1000 + expected);
      q.shift(take);
      expected += take;
    }
    expect(next).toBeGreaterThan(400);
    expect(q.droppedOverflow).toBe(0);
  });

  it('tracks highWater, length and oldestAt', () => {
    const q = make({ capacity: 8 });
    expect(q.oldestAt()).toBe(-1);
    for (let i = 0; i < 6; i++) push(q, 1, i, 10 + i, 0);
    q.shift(4);
    expect(q.oldestAt()).toBe(14);
    for (let i = 0; i < 3; i++) push(q, 1, i, 20 + i, 0);
    expect(q.length).toBe(5);
    expect(q.highWater).toBe(6);
    q.shift(q.length);
    expect(q.length).toBe(0);
    expect(q.oldestAt()).toBe(-1);
    expect(q.highWater).toBe(6);
  });

  it('the fast lane stamps its samples with the clock, and stays shut short of the length wake asks for', () => {
    const q = make({ capacity: 8, clock: { now: () => 42 } });
    const tag = q.numberTag(7);
    expect(q.pushNumber(tag, 1)).toBe(false);
    q.wake(3);
    expect([q.pushNumber(tag, 1.5), q.pushNumber(tag, 2), q.pushNumber(tag, 3)]).toEqual([true, true, false]);
    expect(Array.from({ length: q.length }, (_, i) => [q.resourceAt(i), q.valueAt(i), q.atAt(i)])).toEqual([[7, 1.5, 42], [7, 2, 42]]);
    expect(encode(q, 0, 2)).toBe('[{"id_resource":7,"input":1.5},{"id_resource":7,"input":2}]');
  });

  it('stores booleans, -0 and extreme numbers exactly', () => {
    const q = make({ capacity: 8 });
    const vs = [true, false, -0, 5e-324, 1e21, -(2 ** 53) + 1, Number.MAX_VALUE, 0.1];
    for (const v of vs) push(q, 7, v, 0, 0);
    expect(values(q)).toEqual(vs);
    expect(Object.is(q.valueAt(2), -0)).toBe(true);
    expect(encode(q, 0, 8)).toBe(naive(vs.map((value) => ({ resource: 7, value }))));
  });

  it('seqAt is -1 without seq, and memory follows the options', () => {
    const q = make({ capacity: 10, stringBytes: 100 });
    push(q, 1, 1, 0, 42);
    expect(q.seqAt(0)).toBe(-1);
    const withSeq = make({ capacity: 10, stringBytes: 100, withSeq: true });
    expect(withSeq.bytes - q.bytes).toBe(80);
    expect(make({ capacity: 20, stringBytes: 100 }).bytes - q.bytes).toBe(10 * 21);
    expect(make({ capacity: 10, stringBytes: 300 }).bytes - q.bytes).toBe(200);
  });

  it('lives in the memory it is lent, beside a neighbour it never touches', () => {
    const bytes = make({ capacity: 8, stringBytes: 16, withSeq: true }).bytes;
    const stride = Math.ceil(bytes / 8) * 8;
    const buffer = new ArrayBuffer(3 * stride);
    const asked: number[] = [];
    const lend = (k: number) => ({ take: (n: number) => (asked.push(n), new Uint8Array(buffer, k * stride, n)), give: () => {} });
    const a = make({ capacity: 8, stringBytes: 16, withSeq: true, memory: lend(1) });
    const b = make({ capacity: 8, stringBytes: 16, withSeq: true, memory: lend(2) });
    expect(asked).toEqual([bytes, bytes]);
    for (let i = 0; i < 20; i++) {
      push(a, 1, i, i, i);
      push(b, 2, 'b' + i, i, 100 + i);
    }
    expect(values(a)).toEqual([12, 13, 14, 15, 16, 17, 18, 19]);
    expect(values(b).slice(-2)).toEqual(['b18', 'b19']);
    expect(b.seqAt(b.length - 1)).toBe(119);
    // The region before theirs was never written.
    expect(new Uint8Array(buffer, 0, stride).every((x) => x === 0)).toBe(true);
    expect(() => make({ memory: { take: (n) => new Uint8Array(n - 1), give: () => {} } })).toThrow(RangeError);
    expect(() => make({ memory: { take: (n) => new Uint8Array(new ArrayBuffer(n + 4), 4, n), give: () => {} } })).toThrow(/multiple of 8/);
  });

  it('refuses bad options and bad arguments', () => {
    for (const capacity of [0, -1, 1.5, NaN, Infinity]) expect(() => make({ capacity })).toThrow(RangeError);
    for (const stringBytes of [-1, 0.5, NaN, 2 ** 32]) expect(() => make({ stringBytes })).toThrow(RangeError);
    expect(() => make({ overflow: 'drop' as OverflowPolicy })).toThrow(RangeError);
    expect(() => make({ capacity: 1, stringBytes: 0 })).not.toThrow();
    const q = make();
    push(q, 1, 1, 0, 0);
    for (const r of [0, -1, 1.5, 2 ** 32]) expect(() => push(q, r, 1, 0, 0)).toThrow(RangeError);
    for (const v of [NaN, Infinity, -Infinity]) expect(() => push(q, 1, v, 0, 0)).toThrow(RangeError);
    expect(() => push(q, 1, null as unknown as SampleValue, 0, 0)).toThrow(TypeError);
    expect(() => q.valueAt(1)).toThrow(RangeError);
    expect(() => q.resourceAt(-1)).toThrow(RangeError);
    expect(() => q.lock(2)).toThrow(RangeError);
    expect(() => q.shift(2)).toThrow(RangeError);
    expect(() => encode(q, 1, 1)).toThrow(RangeError);
    expect(q.length).toBe(1);
    expect(encode(q, 1, 0)).toBe('[]');
  });
});

describe('overflow', () => {
  it('drop-newest refuses the new sample and counts it', () => {
    const q = make({ capacity: 3, overflow: 'drop-newest' });
    for (let i = 0; i < 3; i++) expect(push(q, 1, i, 0, 0)).toBe(PUSHED);
    for (let i = 3; i < 8; i++) expect(push(q, 1, i, 0, 0)).toBe(DROPPED_NEW);
    expect(values(q)).toEqual([0, 1, 2]);
    expect(q.droppedOverflow).toBe(5);
    q.shift(1);
    expect(push(q, 1, 9, 0, 0)).toBe(PUSHED);
    expect(values(q)).toEqual([1, 2, 9]);
    expect(q.droppedOverflow).toBe(5);
  });

  it('drop-oldest evicts the head when nothing is locked', () => {
    const q = make({ capacity: 3 });
    for (let i = 0; i < 10; i++) expect(push(q, 1, i, i, 0)).toBe(i < 3 ? PUSHED : PUSHED_EVICTED);
    expect(values(q)).toEqual([7, 8, 9]);
    expect(q.oldestAt()).toBe(7);
    expect(q.droppedOverflow).toBe(7);
    expect(q.highWater).toBe(3);
  });

  it('drop-oldest evicts the first unlocked sample and keeps the order of the rest', () => {
    const q = make({ capacity: 5, withSeq: true });
    for (let i = 0; i < 5; i++) push(q, 10 + i, i, 100 + i, i);
    q.lock(2);
    expect(push(q, 20, 5, 105, 5)).toBe(PUSHED_EVICTED);
    expect(values(q)).toEqual([0, 1, 3, 4, 5]);
    expect(resources(q)).toEqual([10, 11, 13, 14, 20]);
    expect(Array.from({ length: 5 }, (_, i) => q.seqAt(i))).toEqual([0, 1, 3, 4, 5]);
    expect(Array.from({ length: 5 }, (_, i) => q.atAt(i))).toEqual([100, 101, 103, 104, 105]);
    expect(q.inFlight).toBe(2);
    expect(push(q, 20, 6, 106, 6)).toBe(PUSHED_EVICTED);
    expect(values(q)).toEqual([0, 1, 4, 5, 6]);
    // The request is acknowledged: its two samples go, the rest stays in order.
    q.shift(2);
    expect(q.inFlight).toBe(0);
    expect(values(q)).toEqual([4, 5, 6]);
    expect(q.droppedOverflow).toBe(2);
  });

  it('drop-oldest behind a locked string slides it forward and still encodes it as a string', () => {
    const q = make({ capacity: 3, stringBytes: 8 });
    push(q, 1, 'on', 0, 0);
    push(q, 1, 7, 0, 0);
    push(q, 1, 8, 0, 0);
    q.lock(1);
    // 7 goes; the locked string moves one slot on, the head with it.
    expect(push(q, 1, 9, 0, 0)).toBe(PUSHED_EVICTED);
    expect(encode(q, 0, 3)).toBe(naive([{ resource: 1, value: 'on' }, { resource: 1, value: 8 }, { resource: 1, value: 9 }]));
  });

  it('drop-oldest refuses the new sample when every queued sample is in flight', () => {
    const q = make({ capacity: 3 });
    for (let i = 0; i < 3; i++) push(q, 1, i, 0, 0);
    q.lock(3);
    expect(push(q, 1, 3, 0, 0)).toBe(DROPPED_NEW);
    expect(values(q)).toEqual([0, 1, 2]);
    expect(q.droppedOverflow).toBe(1);
    q.lock(0);
    expect(push(q, 1, 4, 0, 0)).toBe(PUSHED_EVICTED);
    expect(values(q)).toEqual([1, 2, 4]);
    expect(q.droppedOverflow).toBe(2);
  });

  it('shift after lock clamps the lock', () => {
    const q = make({ capacity: 6 });
    for (let i = 0; i < 6; i++) push(q, 1, i, 0, 0);
    q.lock(4);
    q.shift(1);
    expect(q.inFlight).toBe(3);
    q.shift(5);
    expect(q.inFlight).toBe(0);
    push(q, 1, 1, 0, 0);
    q.lock(1);
    q.shift(q.length);
    expect(q.inFlight).toBe(0);
  });
});

describe('string pool', () => {
  it('round-trips ASCII, accents, CJK, emoji and lone surrogates', () => {
    const texts = ['hello', '', 'café crème', '温度传感器', '🌡️ 21.5°C 🔥', 'a\ud800b', '\udc00', 'end\ud83d', '"\\\n\u0000\u001f'];
    const q = make({ capacity: texts.length, stringBytes: 200 });
    for (const t of texts) expect(push(q, 3, t, 0, 0)).toBe(PUSHED);
    expect(values(q)).toEqual(texts.map(wellFormed));
    expect(encode(q, 0, texts.length)).toBe(naive(texts.map((t) => ({ resource: 3, value: wellFormed(t) }))));
  });

  it('utf8 helpers agree with TextEncoder, wrapping at the ring end', () => {
    const random = createRandom(7);
    const ring = new Uint8Array(37);
    for (let n = 0; n < 500; n++) {
      const s = randomString(random, 12);
      const bytes = new TextEncoder().encode(s);
      expect(utf8Length(s)).toBe(bytes.length);
      if (bytes.length > ring.length) continue;
      const at = Math.floor(random() * ring.length);
      utf8Write(s, ring, at);
      const written = Array.from({ length: bytes.length }, (_, i) => ring[(at + i) % ring.length]);
      expect(written).toEqual(Array.from(bytes));
      expect(utf8Read(ring, at, bytes.length)).toBe(wellFormed(s));
    }
    const long = 'x'.repeat(150) + 'é'.repeat(70);
    const big = new Uint8Array(400);
    utf8Write(long, big, 0);
    expect(utf8Read(big, 0, utf8Length(long))).toBe(long);
  });

  it('reads ASCII strings longer than a decoding chunk, across the pool end', () => {
    const q = make({ capacity: 4, stringBytes: 300, overflow: 'drop-newest' });
    const long = Array.from({ length: 200 }, (_, i) => String.fromCharCode(32 + (i % 95))).join('');
    push(q, 1, 'x'.repeat(250), 0, 0);
    q.shift(1);
    expect(push(q, 1, long, 0, 0)).toBe(PUSHED);
    expect(q.valueAt(0)).toBe(long);
    expect(encode(q, 0, 1)).toBe(naive([{ resource: 1, value: long }]));
    const ring = new Uint8Array(150);
    utf8Write(long.slice(0, 140), ring, 100);
    expect(asciiRead(ring, 100, 140)).toBe(long.slice(0, 140));
  });

  it('wraps the pool and reclaims the bytes of shifted samples', () => {
    const q = make({ capacity: 4, stringBytes: 10, overflow: 'drop-newest' });
    for (let round = 0; round < 50; round++) {
      const a = 'abc'.slice(0, 1 + (round % 3));
      const b = 'wxyz'.slice(round % 4);
      expect(push(q, 1, a, 0, 0)).toBe(PUSHED);
      expect(push(q, 2, 7, 0, 0)).toBe(PUSHED);
      expect(push(q, 3, b, 0, 0)).toBe(PUSHED);
      expect(values(q)).toEqual([a, 7, b]);
      q.shift(3);
    }
    expect(q.droppedOverflow).toBe(0);
  });

  it('refuses a string that can never fit with TOO_LARGE, uncounted', () => {
    const q = make({ capacity: 4, stringBytes: 6, overflow: 'drop-oldest' });
    push(q, 1, 'abc', 0, 0);
    expect(push(q, 1, 'abcdefg', 0, 0)).toBe(TOO_LARGE);
    expect(push(q, 1, 'ééé', 0, 0)).toBe(PUSHED_EVICTED);
    expect(push(q, 1, 'éééé', 0, 0)).toBe(TOO_LARGE);
    expect(values(q)).toEqual(['ééé']);
    expect(q.droppedOverflow).toBe(1);
    const none = make({ stringBytes: 0 });
    expect(push(none, 1, 'a', 0, 0)).toBe(TOO_LARGE);
    expect(push(none, 1, '', 0, 0)).toBe(PUSHED);
    expect(encode(none, 0, 1)).toBe('[{"id_resource":1,"input":""}]');
  });

  it('drop-newest refuses a string when the pool is full', () => {
    const q = make({ capacity: 8, stringBytes: 8, overflow: 'drop-newest' });
    expect(push(q, 1, 'abcde', 0, 0)).toBe(PUSHED);
    expect(push(q, 1, 'abcd', 0, 0)).toBe(DROPPED_NEW);
    expect(push(q, 1, 'abc', 0, 0)).toBe(PUSHED);
    expect(push(q, 1, 1, 0, 0)).toBe(PUSHED);
    expect(values(q)).toEqual(['abcde', 'abc', 1]);
    expect(q.droppedOverflow).toBe(1);
  });

  it('overflow behind a locked batch keeps every sample in order, through an acknowledgement or a failure', () => {
    for (const outcome of ['acknowledged', 'failed'] as const) {
      const q = make({ capacity: 6 });
      for (let i = 0; i < 6; i++) push(q, 10 + i, i, i, 0);
      q.lock(4);
      // Each new sample evicts the oldest unlocked one; the locked four stay, readable in their order.
      for (let i = 6; i < 13; i++) {
        expect(push(q, 10 + i, i, i, 0)).toBe(PUSHED_EVICTED);
        expect(values(q)).toEqual([0, 1, 2, 3, i - 1, i]);
        expect(resources(q)).toEqual([10, 11, 12, 13, 9 + i, 10 + i]);
      }
      expect(q.oldestAt()).toBe(0);
      if (outcome === 'acknowledged') {
        q.shift(4);
        expect(values(q)).toEqual([11, 12]);
      } else {
        q.lock(0);
        expect(encode(q, 0, 6)).toBe(naive([0, 1, 2, 3, 11, 12].map((v) => ({ resource: 10 + v, value: v }))));
        expect(push(q, 30, 30, 30, 0)).toBe(PUSHED_EVICTED);
        expect(values(q)).toEqual([1, 2, 3, 11, 12, 30]);
      }
      expect(q.droppedOverflow).toBe(outcome === 'acknowledged' ? 7 : 8);
    }
  });

  it('drop-oldest evicts as many old samples as the bytes need', () => {
    const q = make({ capacity: 8, stringBytes: 10 });
    push(q, 1, 'aa', 0, 0);
    push(q, 1, 1, 0, 0);
    push(q, 1, 'bbb', 0, 0);
    push(q, 1, 'cc', 0, 0);
    expect(push(q, 1, 'dddddd', 0, 0)).toBe(PUSHED_EVICTED);
    // 'aa', 1 and 'bbb' had to go to free 6 bytes; 'cc' stays.
    expect(values(q)).toEqual(['cc', 'dddddd']);
    expect(q.droppedOverflow).toBe(3);
  });

  it('eviction behind locked strings closes the hole, also across the pool end', () => {
    const q = make({ capacity: 8, stringBytes: 12, withSeq: true });
    // Move the pool tail near the end so that the locked strings wrap.
    push(q, 1, 'zzzzzzzzz', 0, 0);
    q.shift(1);
    push(q, 1, 'ab', 0, 1);
    push(q, 2, 5, 0, 2);
    push(q, 1, 'cdef', 0, 3);
    push(q, 1, 'ghi', 0, 4);
    push(q, 1, 'jk', 0, 5);
    q.lock(3);
    // 11 of 12 bytes used; 'lmn' needs 2 more: 'ghi' (the first unlocked) goes.
    expect(push(q, 1, 'lmn', 0, 6)).toBe(PUSHED_EVICTED);
    expect(values(q)).toEqual(['ab', 5, 'cdef', 'jk', 'lmn']);
    expect(Array.from({ length: 5 }, (_, i) => q.seqAt(i))).toEqual([1, 2, 3, 5, 6]);
    expect(push(q, 1, 'opq', 0, 7)).toBe(PUSHED_EVICTED);
    expect(values(q)).toEqual(['ab', 5, 'cdef', 'lmn', 'opq']);
    // The locked strings fill half the pool: a string that needs more than the rest is refused.
    expect(push(q, 1, 'rstuvwx', 0, 8)).toBe(DROPPED_NEW);
    expect(values(q)).toEqual(['ab', 5, 'cdef', 'lmn', 'opq']);
    q.shift(3);
    expect(push(q, 1, 'rstuvwx', 0, 8)).toBe(PUSHED_EVICTED);
    expect(values(q)).toEqual(['opq', 'rstuvwx']);
    expect(q.droppedOverflow).toBe(4);
  });
});

describe('encode', () => {
  it('encodes resources beyond the text cache, and resources first seen after an encode', () => {
    const q = make({ capacity: 200, stringBytes: 2000 });
    const model: { resource: number; value: SampleValue }[] = [];
    const kinds: SampleValue[] = [1.5, true, false, 'x"y', -7];
    for (let i = 0; i < 150; i++) {
      // 40 ids, more than the text cache holds: half of them hash to the same entry, half spread.
      const resource = i % 2 === 1 ? 1 + (i % 40) * 15 : 1000 + (i % 40);
      const value = kinds[i % kinds.length];
      push(q, resource, value, 0, 0);
      model.push({ resource, value });
      if (i % 7 === 0) expect(encode(q, 0, q.length)).toBe(naive(model));
    }
    expect(encode(q, 0, 150)).toBe(naive(model));
    expect(encode(q, 37, 90)).toBe(naive(model.slice(37, 127)));
  });

  it('equals JSON.stringify for random mixes, ranges and wrapped rings', () => {
    for (let seed = 1; seed <= 60; seed++) {
      const random = createRandom(seed);
      const capacity = 1 + Math.floor(random() * 40);
      const q = make({ capacity, stringBytes: 64 + Math.floor(random() * 400), overflow: 'drop-oldest' });
      // Advance head and pool tail so the data wraps.
      for (let i = Math.floor(random() * capacity); i > 0; i--) push(q, 1, 'pad' + i, 0, 0);
      q.shift(q.length);
      const model: { resource: number; value: SampleValue }[] = [];
      for (let n = 0; n < capacity * 3; n++) {
        const resource = 1 + Math.floor(random() * (random() < 0.5 ? 5 : 2 ** 32 - 1));
        const value = randomValue(random);
        const code = push(q, resource, value, n, 0);
        if (code === TOO_LARGE) continue;
        model.push({ resource, value: typeof value === 'string' ? wellFormed(value) : value });
        model.splice(0, model.length - q.length);
      }
      expect(values(q)).toEqual(model.map((s) => s.value));
      for (let k = 0; k < 10; k++) {
        const from = Math.floor(random() * (q.length + 1));
        const count = Math.floor(random() * (q.length - from + 1));
        expect(encode(q, from, count)).toBe(naive(model.slice(from, from + count)));
      }
      expect(encode(q, 0, q.length)).toBe(naive(model));
    }
  });
});

describe('model check', () => {
  // A plain-array queue with the same contract, driven by the same random operations.
  interface Entry {
    resource: number;
    value: SampleValue;
    at: number;
    seq: number;
    bytes: number;
  }

  const cases = [
    { overflow: 'drop-oldest', lent: false },
    { overflow: 'drop-newest', lent: false },
    { overflow: 'drop-oldest', lent: true },
    { overflow: 'drop-newest', lent: true },
  ] as const;
  for (const { overflow, lent } of cases) {
    it(`matches a reference model (${overflow}${lent ? ', in lent memory that grows and shrinks' : ''})`, () => {
      // Times a ring in lent memory changed size, over every seed.
      let sizes = 0;
      for (let seed = 100; seed < 140; seed++) {
        const random = createRandom(seed);
        // In lent memory the ring starts at FIRST_SLOTS: capacities beyond it make it grow and shrink.
        const capacity = lent ? 1 + Math.floor(random() * 5 * FIRST_SLOTS) : 1 + Math.floor(random() * 12);
        const stringBytes = Math.floor(random() * (lent ? 2000 : 40));
        // Each region is a buffer of its own; a region given back is poisoned, so that a queue still
        // reading it fails the check.
        const live = new Set<Uint8Array>();
        const memory = {
          take: (n: number) => {
            const region = new Uint8Array(new ArrayBuffer(n + 16), 8, n);
            live.add(region);
            return region;
          },
          give: (region: Uint8Array) => {
            expect(live.delete(region)).toBe(true);
            region.fill(0xa5);
          },
        };
        const q = new SampleQueue({ capacity, overflow, stringBytes, withSeq: true, clock, ...(lent ? { memory } : {}) });
        let lastSlots = q.slots;
        let model: Entry[] = [];
        let locked = 0;
        let dropped = 0;
        let high = 0;
        let seq = 0;
        const used = (): number => model.reduce((sum, e) => sum + e.bytes, 0);
        // In lent memory pushes come more often, so that the ring fills up to its capacity between shifts.
        const pushes = lent ? 0.85 : 0.6;
        for (let step = 0; step < 600; step++) {
          const drawn = random();
          // r < 0.6 pushes; the ranges above it are the other operations, in the same proportions.
          const r = drawn < pushes ? (drawn * 0.6) / pushes : 0.6 + ((drawn - pushes) * 0.4) / (1 - pushes);
          if (r < 0.6) {
            const value = randomValue(random);
            const bytes = typeof value === 'string' ? new TextEncoder().encode(value).length : 0;
            const entry = { resource: 1 + Math.floor(random() * 9), value, at: step, seq: seq++, bytes };
            let expected: number;
            if (bytes > stringBytes) expected = TOO_LARGE;
            else if (model.length < capacity && used() + bytes <= stringBytes) expected = PUSHED;
            else if (overflow === 'drop-newest') expected = DROPPED_NEW;
            else {
              const rest = model.slice(locked);
              let evict = 0;
              let freed = 0;
              while (evict < rest.length && (model.length - evict === capacity || used() - freed + bytes > stringBytes)) {
                freed += rest[evict++].bytes;
              }
              if (model.length - evict === capacity || used() - freed + bytes > stringBytes) expected = DROPPED_NEW;
              else {
                expected = PUSHED_EVICTED;
                model.splice(locked, evict);
                dropped += evict;
              }
            }
            if (expected === DROPPED_NEW) dropped++;
            if (expected === PUSHED || expected === PUSHED_EVICTED) {
              model.push({ ...entry, value: typeof value === 'string' ? wellFormed(value) : value });
            }
            expect(push(q, entry.resource, value, entry.at, entry.seq)).toBe(expected);
            high = Math.max(high, model.length);
          } else if (r < 0.75) {
            const n = Math.floor(random() * (model.length + 1));
            // take gives the body of the first n and locks them; a larger lock stays.
            if (random() < 0.5) {
              q.lock(n);
              locked = n;
            } else {
              expect(take(q, n)).toBe(naive(model.slice(0, n)));
              locked = Math.max(locked, n);
            }
          } else if (r < 0.8) {
            locked = 0;
            q.lock(0);
          } else if (r < 0.97) {
            const n = Math.floor(random() * (model.length + 1));
            model = model.slice(n);
            locked = Math.max(0, locked - n);
            q.shift(n);
          } else {
            model = [];
            locked = 0;
            q.shift(q.length);
          }
          expect(q.length).toBe(model.length);
          expect(q.slots).toBeGreaterThanOrEqual(q.length);
          if (lent) {
            expect(live.size).toBe(1);
            if (q.slots !== lastSlots) sizes++;
            lastSlots = q.slots;
          }
          expect(q.inFlight).toBe(locked);
          expect(q.droppedOverflow).toBe(dropped);
          expect(q.highWater).toBe(high);
          expect(q.oldestAt()).toBe(model.length ? model[0].at : -1);
          // Every sample, locked or not, reads back in queue order whatever the evictions moved.
          expect(Array.from({ length: q.length }, (_, i) => [q.resourceAt(i), q.valueAt(i), q.atAt(i), q.seqAt(i)])).toEqual(
            model.map((e) => [e.resource, e.value, e.at, e.seq]),
          );
        }
        expect(values(q)).toEqual(model.map((e) => e.value));
        expect(Array.from({ length: q.length }, (_, i) => q.seqAt(i))).toEqual(model.map((e) => e.seq));
        expect(encode(q, 0, q.length)).toBe(naive(model));
      }
      if (lent) expect(sizes).toBeGreaterThan(100);
    });
  }
});

const NUMBERS = [0, -0, 1, -1, 0.5, -123.456, 1e21, 1e-7, 5e-324, -5e-324, 2 ** 53 - 1, -(2 ** 53), 2 ** 53 + 2, 1.7976931348623157e308];
const PIECES = ['a', 'Z', ' ', '"', '\\', '/', '\n', '\t', '\u0000', '\u001f', '\u007f', 'é', 'ß', '中', '€', '😀', '\ud800', '\udfff', '\u2028', '\ufeff'];

function randomValue(random: () => number): SampleValue {
  const r = random();
  if (r < 0.3) return NUMBERS[Math.floor(random() * NUMBERS.length)];
  if (r < 0.5) return (random() - 0.5) * 10 ** Math.floor(random() * 30 - 10);
  if (r < 0.6) return Math.floor((random() - 0.5) * 2 ** 33);
  if (r < 0.7) return random() < 0.5;
  return randomString(random, 10);
}

function randomString(random: () => number, max: number): string {
  let s = '';
  for (let n = Math.floor(random() * (max + 1)); n > 0; n--) s += PIECES[Math.floor(random() * PIECES.length)];
  return s;
}
