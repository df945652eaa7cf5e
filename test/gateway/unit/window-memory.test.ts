// The memory of the gateway's windows: regions of a few large buffers, aligned, apart, zeroed when lent again.
import { expect, it } from 'vitest';

import { WindowMemory } from '../../../platforms/node/gateway/window-memory';

it('lends aligned regions that do not overlap, 64 to a buffer, one size at a time', () => {
  const windows = new WindowMemory();
  const regions = Array.from({ length: 130 }, () => windows.take(9_533));
  const buffers = new Set(regions.map((r) => r.buffer));
  expect(buffers.size).toBe(3);
  for (const r of regions) {
    expect(r.byteLength).toBe(9_533);
    expect(r.byteOffset % 8).toBe(0);
  }
  const spans = regions.map((r) => [r.buffer, r.byteOffset, r.byteOffset + r.byteLength] as const);
  for (let i = 0; i < spans.length; i++) {
    for (let j = i + 1; j < spans.length; j++) {
      const [bi, si, ei] = spans[i], [bj, sj, ej] = spans[j];
      if (bi === bj) expect(ei <= sj || ej <= si).toBe(true);
    }
  }
  // Another size gets buffers of its own.
  expect(buffers.has(windows.take(100).buffer)).toBe(false);
});

it('lends a region given back again, zeroed', () => {
  const windows = new WindowMemory();
  const a = windows.take(1_000);
  a.fill(7);
  windows.give(a);
  const again = windows.take(1_000);
  expect(again.buffer).toBe(a.buffer);
  expect(again.byteOffset).toBe(a.byteOffset);
  expect(again.every((x) => x === 0)).toBe(true);
  expect(windows.take(1_000).byteOffset).not.toBe(a.byteOffset);
});
