// Bundled into the XS worker for the flash queue's allocation test (flash-queue.xs.test.ts): the queue on
// a file system in memory whose files are byte arrays allocated once, so that writing a byte (a number,
// as the SDK's File takes it) allocates nothing of its own; reading returns a new ArrayBuffer, as the
// SDK's File does. Each step is one evaluation.
import { openFlashQueue } from '../../platforms/moddable/storage/flash-queue';
import type { FlashQueue } from '../../platforms/moddable/storage/flash-queue';
import type { DirectoryEntry, FileHandle, FileSystem } from '../../platforms/moddable/storage/file-module';
import { settled } from '../xs/host';

/** Bytes a file can grow to: a segment of 16 blocks. */
const FILE_BYTES = 16 * 4096;
const disk = new Map<string, { bytes: Uint8Array; length: number }>();

class MemoryFile implements FileHandle {
  position = 0;
  private readonly file: { bytes: Uint8Array; length: number };

  constructor(path: string, write = false) {
    let file = disk.get(path);
    if (file === undefined) {
      if (!write) throw new Error('file not found');
      file = { bytes: new Uint8Array(FILE_BYTES), length: 0 };
      disk.set(path, file);
    }
    this.file = file;
  }

  get length(): number {
    return this.file.length;
  }

  read(_type: typeof ArrayBuffer, count?: number): ArrayBuffer {
    const n = count ?? this.file.length - this.position;
    if (this.position + n > this.file.length) throw new Error('read past end of file');
    const out = this.file.bytes.slice(this.position, this.position + n).buffer;
    this.position += n;
    return out;
  }

  // Parameters, not a rest array: a rest array would be an allocation per call, which the test would count.
  write(a: ArrayBuffer | number, b?: unknown, c?: unknown, d?: unknown, e?: unknown, f?: unknown, g?: unknown, h?: unknown, i?: unknown, j?: unknown, k?: unknown): void {
    if (typeof a !== 'number') {
      const bytes = new Uint8Array(a);
      this.file.bytes.set(bytes, this.position);
      this.position += bytes.length;
    } else {
      this.byte(a);
      if (b !== undefined) this.byte(b);
      if (c !== undefined) this.byte(c);
      if (d !== undefined) this.byte(d);
      if (e !== undefined) this.byte(e);
      if (f !== undefined) this.byte(f);
      if (g !== undefined) this.byte(g);
      if (h !== undefined) this.byte(h);
      if (i !== undefined) this.byte(i);
      if (j !== undefined) this.byte(j);
      if (k !== undefined) this.byte(k);
    }
    if (this.position > this.file.length) this.file.length = this.position;
  }

  private byte(b: unknown): void {
    this.file.bytes[this.position++] = b as number;
  }

  close(): void {}

  static delete(path: string): boolean {
    return disk.delete(path);
  }

  static exists(path: string): boolean {
    return disk.has(path);
  }

  static rename(from: string, to: string): boolean {
    const file = disk.get(from);
    if (file === undefined) return false;
    disk.delete(from);
    disk.set(to, file);
    return true;
  }
}

class MemoryIterator {
  private readonly entries: DirectoryEntry[] = [];
  private at = 0;

  constructor(dir: string) {
    disk.forEach((file, path) => {
      if (path.indexOf(dir) === 0) this.entries.push({ name: path.slice(dir.length), length: file.length });
    });
  }

  next(): DirectoryEntry | undefined {
    return this.entries[this.at++];
  }
}

const files: FileSystem = { File: MemoryFile, Iterator: MemoryIterator };
let queue: FlashQueue | null = null;
let next = 0;
let readFrom = 0;
let read = 0;
let sum = 0;
const visit = (_seq: number, _resource: number, value: unknown): void => {
  read++;
  sum += value as number;
};

const flash = {
  open() {
    queue = openFlashQueue(files, { path: '/feed-agent.q', segmentBlocks: 16, maxBytes: 64 * 4096, now: () => 0 });
    return settled(Promise.resolve(queue.load(() => undefined)));
  },

  /** `count` samples, numbers of both kinds, in one burst. */
  append(count: number) {
    const q = queue as FlashQueue;
    for (let i = 0; i < count; i++, next++) q.append(next, 201 + (next % 4), next % 2 === 0 ? next : next + 0.25, next * 10);
    q.commit();
    return settled(Promise.resolve(q.stats().bytes));
  },

  /** One read of `count` samples from where the last stopped. */
  read(count: number) {
    read = 0;
    readFrom = (queue as FlashQueue).read(readFrom, count, visit);
    return settled(Promise.resolve(read));
  },
};

(globalThis as { flash?: unknown }).flash = flash;
