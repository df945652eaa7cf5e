// The disk behind the `file` stand-in (test/moddable/standins/file.ts): real files under a scratch
// directory, operated synchronously as the SDK's File is. On Node the stand-in calls it directly; from the
// XS worker each operation is one issueCommand, which is synchronous there.
import { closeSync, existsSync, fstatSync, mkdtempSync, openSync, readdirSync, readSync, renameSync, rmSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, normalize } from 'node:path';

export type DiskOp =
  | { op: 'open'; path: string; write: boolean }
  | { op: 'read'; handle: number; position: number; count: number }
  | { op: 'write'; handle: number; position: number; bytes: string }
  | { op: 'length'; handle: number }
  | { op: 'close'; handle: number }
  | { op: 'delete'; path: string }
  | { op: 'exists'; path: string }
  | { op: 'rename'; from: string; to: string }
  | { op: 'list'; path: string };

/** Bytes travel as latin1 strings (one char per byte): JSON carries them across issueCommand. */
export type DiskAnswer = number | boolean | string | null | DiskEntry[];

/** A directory's entry, as the SDK's Iterator gives it: `length` for a file only. */
export interface DiskEntry {
  name: string;
  length?: number;
}

export class Disk {
  readonly root = mkdtempSync(join(tmpdir(), 'feed-agent-disk-'));

  /** Throws as the SDK's File does ("file not found", "read past end of file"). */
  run(o: DiskOp): DiskAnswer {
    switch (o.op) {
      case 'open': {
        const path = this.at(o.path);
        if (!o.write && !existsSync(path)) throw new Error('file not found');
        // The SDK opens rb+ (wb+ when missing) for writing: the content is kept.
        return openSync(path, o.write ? (existsSync(path) ? 'r+' : 'w+') : 'r');
      }
      case 'read': {
        if (o.position >= fstatSync(o.handle).size) throw new Error('read past end of file');
        const buffer = Buffer.alloc(o.count);
        const n = readSync(o.handle, buffer, 0, o.count, o.position);
        return buffer.subarray(0, n).toString('latin1');
      }
      case 'write':
        writeSync(o.handle, Buffer.from(o.bytes, 'latin1'), 0, o.bytes.length, o.position);
        return null;
      case 'length':
        return fstatSync(o.handle).size;
      case 'close':
        closeSync(o.handle);
        return null;
      case 'delete':
        if (!existsSync(this.at(o.path))) return false;
        unlinkSync(this.at(o.path));
        return true;
      case 'exists':
        return existsSync(this.at(o.path));
      case 'rename':
        renameSync(this.at(o.from), this.at(o.to));
        return true;
      case 'list':
        return readdirSync(this.at(o.path), { withFileTypes: true }).map((e) =>
          e.isDirectory() ? { name: e.name } : { name: e.name, length: statSync(join(this.at(o.path), e.name)).size });
    }
  }

  remove(): void {
    rmSync(this.root, { recursive: true, force: true });
  }

  /** A path of the stand-in's file system, under the root; nothing escapes it. */
  private at(path: string): string {
    const inside = normalize('/' + path);
    return join(this.root, inside);
  }
}
