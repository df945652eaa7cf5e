// Which MQTT messages were handled before the gateway last stopped, so that a message the broker hands
// over again (DUP) after a kill -9 is not stored twice. The broker redelivers a QoS 1 message whose PUBACK
// it did not get with its original packet id; packet ids are reused, so the key is (packet id,
// fingerprint of topic and payload). Each handled message is noted after its reading reached the durable
// queue and before its PUBACK: a redelivery that matches a note was stored; one that does not was not
// (or was killed between the two writes: then it is stored twice, never lost).
//
// The notes are a ring of fixed slots in one file (written in place, no growth): the last RING messages.
// Brokers number packets upwards (Mosquitto, aedes), so an id comes back only after 65,535 others, far
// past the ring: an old note cannot be mistaken for a new message.
import { closeSync, fstatSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';

const RING = 4096;
const SLOT = 16;

export class Receipts {
  private readonly fd: number;
  /** packet id → slot index of its newest note. */
  private readonly byId = new Map<number, number>();
  private readonly slotId = new Int32Array(RING).fill(-1);
  private readonly slotPrint = new Uint32Array(RING);
  private counter = 1;
  private readonly slot = Buffer.alloc(SLOT);

  constructor(file: string) {
    closeSync(openSync(file, 'a'));
    this.fd = openSync(file, 'r+');
    const size = fstatSync(this.fd).size;
    if (size !== RING * SLOT) ftruncateSync(this.fd, RING * SLOT);
    const all = Buffer.alloc(RING * SLOT);
    if (size === RING * SLOT) readSync(this.fd, all, 0, all.length, 0);
    const notes: { counter: number; id: number; print: number }[] = [];
    for (let i = 0; i < RING; i++) {
      const at = i * SLOT;
      const counter = all.readUInt32LE(at);
      const id = all.readUInt16LE(at + 4);
      const print = all.readUInt32LE(at + 8);
      if (counter === 0 || all.readUInt32LE(at + 12) !== check(counter, id, print)) continue;
      notes.push({ counter, id, print });
    }
    notes.sort((a, b) => a.counter - b.counter);
    for (const n of notes) this.remember(n.counter, n.id, n.print);
    this.counter = notes.length > 0 ? notes[notes.length - 1].counter + 1 : 1;
  }

  /** Whether a message with this packet id, topic and payload was noted (stored before a restart). */
  has(id: number, topic: string, payload: Uint8Array): boolean {
    const slot = this.byId.get(id);
    return slot !== undefined && this.slotPrint[slot] === fingerprint(topic, payload);
  }

  /** Notes a handled message: written to the OS before this returns. */
  note(id: number, topic: string, payload: Uint8Array): void {
    const counter = this.counter++;
    const print = fingerprint(topic, payload);
    const b = this.slot;
    b.writeUInt32LE(counter >>> 0, 0);
    b.writeUInt16LE(id, 4);
    b.writeUInt16LE(0, 6);
    b.writeUInt32LE(print, 8);
    b.writeUInt32LE(check(counter >>> 0, id, print), 12);
    writeSync(this.fd, b, 0, SLOT, (counter % RING) * SLOT);
    this.remember(counter, id, print);
  }

  close(): void {
    closeSync(this.fd);
  }

  private remember(counter: number, id: number, print: number): void {
    const slot = counter % RING;
    const old = this.slotId[slot];
    if (old >= 0 && this.byId.get(old) === slot) this.byId.delete(old);
    this.slotId[slot] = id;
    this.slotPrint[slot] = print;
    this.byId.set(id, slot);
  }
}

/** FNV-1a over the topic, a separator and the payload. */
function fingerprint(topic: string, payload: Uint8Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < topic.length; i++) h = Math.imul(h ^ (topic.charCodeAt(i) & 0xffff), 0x01000193);
  h = Math.imul(h ^ 0xff, 0x01000193);
  for (let i = 0; i < payload.length; i++) h = Math.imul(h ^ payload[i], 0x01000193);
  return h >>> 0;
}

/** Tells a whole slot from a torn or empty one. */
function check(counter: number, id: number, print: number): number {
  return (Math.imul(counter ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(id + 1, 0xc2b2ae35) ^ print) >>> 0;
}
