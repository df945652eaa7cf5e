// A stand-in for the SDK's `file` module (documentation/files/files.md; modules/files/file/lin and
// littlefs): a File class and a directory Iterator over a disk the test owns, synchronous as the SDK's are.
// Reading past the end throws "read past end of file"; opening a missing file to read throws "file not
// found"; opening to write creates it and keeps what it holds.
import type { DirectoryEntry, DirectoryIteratorClass, FileClass, FileHandle, FileSystem } from '../../../platforms/moddable/storage/file-module';
import type { DiskAnswer, DiskEntry, DiskOp } from '../../support/disk';
import { bytesOf, latin1 } from './bytes';

/** One disk operation, answered synchronously (it throws what the disk threw). */
export type DiskLink = (op: DiskOp) => DiskAnswer;

export function fileStandIn(disk: DiskLink): FileClass {
  class File implements FileHandle {
    position = 0;
    private handle: number | null;

    constructor(path: string, write = false) {
      this.handle = disk({ op: 'open', path, write }) as number;
    }

    get length(): number {
      return disk({ op: 'length', handle: this.open() }) as number;
    }

    read(_type: typeof ArrayBuffer, count?: number): ArrayBuffer {
      const n = count ?? this.length - this.position;
      const text = disk({ op: 'read', handle: this.open(), position: this.position, count: n }) as string;
      if (text.length < n) throw new Error('read past end of file');
      this.position += n;
      return bytesOf(text);
    }

    write(...items: (ArrayBuffer | number)[]): void {
      // A number is one byte, as the SDK writes it: all of them in one operation.
      let bytes = '';
      for (const item of items) bytes += typeof item === 'number' ? String.fromCharCode(item & 0xff) : latin1(item);
      disk({ op: 'write', handle: this.open(), position: this.position, bytes });
      this.position += bytes.length;
    }

    close(): void {
      disk({ op: 'close', handle: this.open() });
      this.handle = null;
    }

    static delete(path: string): boolean {
      return disk({ op: 'delete', path }) as boolean;
    }

    static exists(path: string): boolean {
      return disk({ op: 'exists', path }) as boolean;
    }

    static rename(from: string, to: string): boolean {
      return disk({ op: 'rename', from, to }) as boolean;
    }

    private open(): number {
      if (this.handle === null) throw new Error('closed');
      return this.handle;
    }
  }
  return File;
}

/** The Iterator over the same disk: a directory's entries, then undefined. */
export function iteratorStandIn(disk: DiskLink): DirectoryIteratorClass {
  return class Iterator {
    private readonly entries: DiskEntry[];
    private at = 0;

    constructor(path: string) {
      this.entries = disk({ op: 'list', path }) as DiskEntry[];
    }

    next(): DirectoryEntry | undefined {
      return this.entries[this.at++];
    }
  };
}

/** What the flash queue takes: File and Iterator over `disk`; `File` may be a subclass of the stand-in's. */
export function fileSystemStandIn(disk: DiskLink, File: FileClass = fileStandIn(disk)): FileSystem {
  return { File, Iterator: iteratorStandIn(disk) };
}
