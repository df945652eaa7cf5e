// Bundled into the XS worker for the flash queue's allocation test (flash-queue.xs.test.ts): the queue on
// a file system in memory whose files are byte arrays allocated once, so that writing allocates nothing
// of its own; reading returns a new ArrayBuffer, as the SDK's File does. Each step is one evaluation.
import { openFlashQueue } from '../../platforms/moddable/flash-queue';
import type { FlashQueue } from '../../platforms/moddable/flash-queue';
import type { DirectoryEntry, FileHandle, FileSystem } from '../../platforms/moddable/sdk';
import { settled } from '../xs/host';

/** Bytes a file can grow to: a segment of 16 blocks. */
const FILE_BYTES = 16 * 4096;
const disk = new Map<string, { bytes: Uint8Array; length: number }>();
const views = new Map<ArrayBuffer, Uint8Array>();

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

  write(item: ArrayBuffer): void {
    // The queue writes from a few buffers again and again: their views are made once.
    let bytes = views.get(item);
    if (bytes === undefined) views.set(item, (bytes = new Uint8Array(item)));
    this.file.bytes.set(bytes, this.position);
    this.position += bytes.length;
    if (this.position > this.file.length) this.file.length = this.position;
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
