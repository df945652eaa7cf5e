// The MQTT receipts: what was noted before a restart is known after it (a DUP redelivery of a stored
// message is recognised), a torn slot is ignored, and the ring forgets what is older than its size.
import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';

import { Receipts } from '../../../platforms/node/gateway/receipts';
import { tempDir } from '../support';

const dirs: { remove: () => void }[] = [];
afterEach(() => dirs.splice(0).forEach((d) => d.remove()));

const bytes = (s: string) => Buffer.from(s);

it('knows across a reopen what was noted, by packet id, topic and payload together', () => {
  const d = tempDir('gw-receipts-');
  dirs.push(d);
  const file = join(d.dir, 'r.receipts');
  const r = new Receipts(file);
  r.note(7, 'a/b', bytes('21.5'));
  r.note(8, 'a/b', bytes('21.5'));
  r.close();
  const again = new Receipts(file);
  expect(again.has(7, 'a/b', bytes('21.5'))).toBe(true);
  expect(again.has(8, 'a/b', bytes('21.5'))).toBe(true);
  expect(again.has(7, 'a/c', bytes('21.5'))).toBe(false);
  expect(again.has(7, 'a/b', bytes('21.6'))).toBe(false);
  expect(again.has(9, 'a/b', bytes('21.5'))).toBe(false);
  // A packet id noted again belongs to its newest message.
  again.note(7, 'x', bytes('1'));
  expect(again.has(7, 'a/b', bytes('21.5'))).toBe(false);
  expect(again.has(7, 'x', bytes('1'))).toBe(true);
  again.close();
});

it('ignores a torn slot and forgets what the ring has overwritten', () => {
  const d = tempDir('gw-receipts-');
  dirs.push(d);
  const file = join(d.dir, 'r.receipts');
  const r = new Receipts(file);
  for (let i = 1; i <= 4096 + 10; i++) r.note(i % 65536, 't', bytes(String(i)));
  expect(r.has(5, 't', bytes('5'))).toBe(false); // overwritten by note 4101
  expect(r.has(4106, 't', bytes('4106'))).toBe(true);
  r.close();
  // Tear the slot of note 4106 (slot 4106 % 4096 = 10): half written.
  const fd = openSync(file, 'r+');
  writeSync(fd, Buffer.from([0xff, 0xff]), 0, 2, 10 * 16 + 8);
  closeSync(fd);
  const again = new Receipts(file);
  expect(again.has(4106, 't', bytes('4106'))).toBe(false);
  expect(again.has(4105, 't', bytes('4105'))).toBe(true);
  // Numbering goes on after the newest whole note.
  again.note(1, 'n', bytes('n'));
  again.close();
  expect(new Receipts(file).has(1, 'n', bytes('n'))).toBe(true);
});
