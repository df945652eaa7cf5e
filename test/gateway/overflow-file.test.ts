// The overflow's files on their own: read back oldest first across segment files, a fed segment deleted,
// the bound refusing a reading until feeding makes room, and a reopen going on from the last one fed.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';

import { Overflow } from '../../src/gateway/overflow';
import { tempDir } from './support';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0).reverse()) c();
});

const segments = (dir: string) => readdirSync(dir).filter((n) => n.startsWith('seg-'));

function drain(o: Overflow, n: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const r = o.peek();
    if (r === null) break;
    out.push(r.value as number);
    o.shift();
  }
  return out;
}

it('gives its readings back oldest first across segments, refuses past its bound, deletes what was fed, and goes on after a reopen', () => {
  const d = tempDir('gw-overflow-file-');
  cleanups.push(d.remove);
  // 8 KB: segments of 2 KB, about 50 readings each.
  const options = { fsync: 'never' as const, fsyncIntervalMs: 1000, maxBytes: 8192 };
  let o = new Overflow(d.dir, options);
  let taken = 0;
  while (o.push(201, taken)) taken++;
  expect(o.refusal).toMatch(/durable queue is full/);
  expect(taken).toBeGreaterThan(150);
  expect(o.size).toBe(taken);
  const before = segments(d.dir);
  expect(before.length).toBeGreaterThan(3);
  // Half fed back: the segments of that half are deleted, and there is room again.
  const half = Math.floor(taken / 2);
  expect(drain(o, half)).toEqual(Array.from({ length: half }, (_, i) => i));
  expect(segments(d.dir)).not.toContain(before[0]);
  expect(o.push(201, taken)).toBe(true);
  taken++;
  o.close();
  // After a restart, the rest in order, then what comes next.
  o = new Overflow(d.dir, options);
  expect(o.size).toBe(taken - half);
  expect(o.push(201, taken)).toBe(true);
  taken++;
  expect(drain(o, taken)).toEqual(Array.from({ length: taken - half }, (_, i) => half + i));
  expect(o.size).toBe(0);
  expect(o.peek()).toBeNull();
  // Everything fed: the files shrink to the newest segment's few records, whatever the acks wrote.
  const bytes = segments(d.dir).reduce((n, f) => n + statSync(join(d.dir, f)).size, 0);
  expect(bytes).toBeLessThan(2048 + 100);
  o.close();
});
