// QueueStorage on the SDK's `file` module (littlefs on the Pico W and the ESP32, POSIX files on lin): a
// backlog, so that the agent's queue in RAM is a window onto what an outage leaves on flash (src/core/host/host.ts,
// docs/moddable.md "Flash"). Samples go to segment files of consecutive samples (segment-records.ts), each
// at most `segmentBlocks` littlefs blocks, named `path.<first seq>` while written and renamed
// `path.<first>-<last>` once complete. Nothing is ever rewritten: a segment is appended to in bursts (the
// core's `spillEvery`; a burst is committed when the file closes, which littlefs makes atomic), and
// deleted whole once every sample in it is finished, or given up at the bound under drop-oldest. What is
// finished, and the batch out in a request, live in `path.out` (in-flight-file.ts), written once per batch
// sent from flash. While the service answers none of it is written. The bound counts what littlefs uses:
// whole blocks, with its pointers inside them.
import type { InFlight, QueueStorage, SampleValue, StoredVisit } from '../../../src/core/host/host';
import { InFlightFile } from './in-flight-file';
import { HEADER_BYTES, RecordReader, RecordWriter } from './segment-records';
import type { FileClass, FileHandle, FileSystem } from './file-module';

export interface FlashQueueOptions {
  /** Where the backlog lives, from the `file` module's root: `config.file.root + "feed-agent.q"` (files `path.*`). */
  path: string;
  /** Once a flush failed, a burst is written every this many new samples (QueueStorage.spillEvery). Default 64. */
  spillEvery?: number;
  /** The most flash the backlog takes, in bytes of littlefs blocks (4 KB each), its state's block included. Default 640 KiB. */
  maxBytes?: number;
  /** Blocks of a segment: what is deleted or given up at once. Default 4 (16,368 bytes of records). */
  segmentBlocks?: number;
  /**
   * The host's monotonic clock (the agent's `Host.now`). With it a segment records how far the wall clock
   * was ahead of it, and a sample of an earlier boot comes back with a time on this boot's clock when both
   * boots knew the wall time; without it, or without a wall time, it comes back undated (NaN).
   */
  now?: () => number;
  /** Milliseconds since 1970 (default `Date.now`): known once past 3 Jan 2023, the SDK's own test after SNTP. */
  wall?: () => number;
  /** Where the queue says what it had to drop or found damaged. */
  log?: (message: string) => void;
}

export interface FlashQueueStats {
  /** Flash the backlog takes now (`usedBytes()`). */
  bytes: number;
  segments: number;
  /** Commits since the queue was opened: bursts and writes of its state. The flash's wear. */
  writes: number;
  /** Samples lost to a write that failed or a commit that did not happen (each said in the log). */
  lost: number;
}

/** A QueueStorage with all of a backlog's parts (src/core/host/host.ts says what each does). */
export interface FlashQueue extends QueueStorage {
  readonly spillEvery: number;
  readonly maxBytes: number;
  commit(): void;
  read(from: number, max: number, visit: StoredVisit): number;
  discard(after: number): number;
  usedBytes(): number;
  sending(batch: Readonly<InFlight>): void;
  inFlight(): InFlight | null;
  close(): void;
  stats(): FlashQueueStats;
}

export const DEFAULT_SPILL_EVERY = 64;
/** 160 blocks of 4 KB: 57 hours of four roles every 10 s (npm run bench -- --only flash), beside the image in the Pico W's 768 KiB littlefs (docs/pico.md). */
export const DEFAULT_MAX_BYTES = 640 * 1024;
const DEFAULT_SEGMENT_BLOCKS = 4;
/** The erase unit of the flash littlefs runs on here (the Pico's and the ESP32's sector), and its block. */
const BLOCK = 4096;
/** Two blocks of segments and one for the state. */
const MIN_MAX_BYTES = 3 * BLOCK;
/** Segments short of full the queue keeps track of beyond the bound's full ones. */
const SHORT_SEGMENTS = 16;
/** What a read takes from a file at a time: about 180 numbers. */
const CHUNK = 2048;
/** Wall time is known once the clock is past this (3 Jan 2023): the Wi-Fi setup (firmware/wifi-join.ts) asks the same before SNTP, as the SDK's setup/network. */
export const WALL_KNOWN = 1672722071000;

export function openFlashQueue(files: FileSystem, options: FlashQueueOptions): FlashQueue {
  const spillEvery = options.spillEvery ?? DEFAULT_SPILL_EVERY;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const segmentBlocks = options.segmentBlocks ?? DEFAULT_SEGMENT_BLOCKS;
  if (!Number.isSafeInteger(spillEvery) || spillEvery < 1) throw new RangeError('spillEvery must be an integer ≥ 1');
  if (!Number.isSafeInteger(maxBytes) || maxBytes < MIN_MAX_BYTES) throw new RangeError('maxBytes must be an integer ≥ ' + MIN_MAX_BYTES);
  if (!Number.isSafeInteger(segmentBlocks) || segmentBlocks < 1) throw new RangeError('segmentBlocks must be an integer ≥ 1');
  return new Backlog(files, options, spillEvery, maxBytes, segmentBlocks);
}

class Backlog implements FlashQueue {
  private readonly File: FileClass;
  private readonly iterate: FileSystem['Iterator'];
  private readonly dir: string;
  private readonly base: string;
  private readonly state: InFlightFile;
  /** Blocks the segments may take: the bound less the state's block. */
  private readonly blockLimit: number;
  private readonly segmentBytes: number;
  private readonly segmentBlocks: number;
  private readonly now?: () => number;
  private readonly wall: () => number;
  private readonly log?: (message: string) => void;

  // The segments, oldest first: first and last sequence number, bytes of whole records, renamed complete.
  private first = new Float64Array(0);
  private last = new Float64Array(0);
  private bytes = new Uint32Array(0);
  private sealed = new Uint8Array(0);
  private n = 0;
  private usedBlocks = 0;

  /** The newest segment is this boot's and takes appends; `file` is open during a burst. */
  private writable = false;
  private file: FileHandle | null = null;
  private dirty = false;
  private readonly writer = new RecordWriter();
  /** The writable segment's blocks, what they hold, and the wall clock's lead its header gives. */
  private blocksNow = 0;
  private capNow = 0;
  private segmentWall = NaN;

  /** Where reading stopped: in the segment starting at `curFirst`, the record at `curOffset`, whose sample is `curSeq`. */
  private readonly reader = new RecordReader();
  private curFirst = -1;
  private curOffset = 0;
  private curSeq = 0;
  /** What turns the times of the segment being read into this boot's (0 for this boot's, NaN when it cannot). */
  private curShift = 0;
  private visited = 0;

  /** Every sample up to this one is finished; the same as `path.out` says. */
  private finished = -1;
  private finishedWritten = -1;
  private stateOnFlash = false;
  private out: InFlight | null = null;
  /** The newest sequence number stored, and the first of this boot. */
  private newest = -1;
  private bootSeq = 0;
  private writes = 0;
  private lost = 0;

  constructor(
    files: FileSystem,
    options: FlashQueueOptions,
    readonly spillEvery: number,
    readonly maxBytes: number,
    segmentBlocks: number,
  ) {
    this.File = files.File;
    this.iterate = files.Iterator;
    const slash = options.path.lastIndexOf('/');
    this.dir = options.path.slice(0, slash + 1);
    this.base = options.path.slice(slash + 1);
    this.state = new InFlightFile(files.File, options.path + '.out');
    this.blockLimit = Math.floor(maxBytes / BLOCK) - 1;
    this.segmentBytes = capacityOf(segmentBlocks);
    this.segmentBlocks = segmentBlocks;
    this.now = options.now;
    this.wall = options.wall ?? (() => Date.now());
    this.log = options.log;
  }

  load(visit: StoredVisit, max?: number): number {
    this.closeWrite();
    const found = this.list();
    const count = found.length / 3;
    // Room for the bound's full segments and as many short ones (a boot, a wall time learnt, a gap each):
    // past that, a new one waits as at the bound.
    const cap = Math.max(count, Math.ceil(this.blockLimit / this.segmentBlocks) + SHORT_SEGMENTS) + 1;
    this.first = new Float64Array(cap);
    this.last = new Float64Array(cap);
    this.bytes = new Uint32Array(cap);
    this.sealed = new Uint8Array(cap);
    this.n = 0;
    this.writable = false;
    this.curFirst = -1;
    for (let k = 0; k < count; k++) {
      const i = this.n++;
      this.first[i] = found[3 * k];
      this.last[i] = found[3 * k + 1];
      this.bytes[i] = found[3 * k + 2];
      this.sealed[i] = this.last[i] >= 0 ? 1 : 0;
    }
    // A segment not renamed complete (the one written last, or one whose rename failed) is read to its end.
    for (let i = 0; i < this.n; i++) {
      if (this.sealed[i] === 1) continue;
      this.last[i] = this.first[i] - 1;
      this.walk(i, this.first[i], Infinity, null);
      this.last[i] = this.curSeq - 1;
      if (this.last[i] < this.first[i]) this.drop(i--);
    }
    this.curFirst = -1;
    const saved = this.state.read();
    this.stateOnFlash = this.state.exists;
    this.finished = this.finishedWritten = saved?.finished ?? -1;
    this.out = saved?.batch ?? null;
    while (this.n > 0 && this.last[0] <= this.finished) this.drop(0);
    this.newest = Math.max(this.n > 0 ? this.last[this.n - 1] : -1, this.finished, this.out?.lastSeq ?? -1);
    this.bootSeq = this.newest + 1;
    if (this.n === 0) this.removeState();
    this.recount();
    this.read(this.finished + 1, max ?? Infinity, visit);
    return this.bootSeq;
  }

  append(seq: number, resource: number, value: SampleValue, at: number): boolean {
    if (this.writable && this.file === null) this.reopen();
    let need = this.continues(seq) ? this.writer.bytesFor(resource, value, at) : -1;
    if (need < 0 || this.bytes[this.n - 1] + need > this.segmentBytes) {
      if (!this.begin(seq, value)) return false;
      need = this.writer.bytesFor(resource, value, at);
    }
    const k = this.n - 1;
    const end = this.bytes[k] + need;
    if (end > this.capNow) {
      const more = blocksFor(end) - this.blocksNow;
      if (this.usedBlocks + more > this.blockLimit) return false;
      this.usedBlocks += more;
      this.blocksNow += more;
      this.capNow = capacityOf(this.blocksNow);
    }
    try {
      this.writer.sample(this.file as FileHandle, resource, value, at);
    } catch (e) {
      this.recover(k, 'a write failed');
      throw e;
    }
    this.dirty = true;
    this.bytes[k] = end;
    this.last[k] = seq;
    this.newest = seq;
    return true;
  }

  commit(): void {
    this.closeWrite();
  }

  ack(seq: number): void {
    if (seq <= this.finished) return;
    this.finished = seq;
    while (this.n > 0 && this.last[0] <= seq) this.drop(0);
    if (this.n === 0) this.removeState();
  }

  read(from: number, max: number, visit: StoredVisit): number {
    // littlefs reads what a close committed.
    this.closeWrite();
    this.visited = 0;
    const start = Math.max(from, this.finished + 1);
    for (let i = 0; i < this.n; i++) {
      if (this.last[i] < start) continue;
      const at = Math.max(start, this.first[i]);
      if (this.visited === max) return at;
      const next = this.walk(i, at, max, visit);
      if (next >= 0) return next;
    }
    return this.newest + 1;
  }

  discard(after: number): number {
    // The oldest segment wholly beyond what the window holds; never the newest, which may be written.
    for (let i = 0; i < this.n - 1; i++) {
      if (this.first[i] <= after) continue;
      const gone = this.last[i] - this.first[i] + 1;
      this.drop(i);
      return gone;
    }
    return 0;
  }

  sending(batch: Readonly<InFlight>): void {
    // Only a batch read from flash: one of samples in RAM only would not come back after a reboot anyway.
    if (this.n === 0 || batch.firstSeq < this.first[0] || batch.lastSeq > this.newest) return;
    this.writeState(batch);
  }

  inFlight(): InFlight | null {
    return this.out;
  }

  usedBytes(): number {
    return (this.usedBlocks + (this.stateOnFlash ? 1 : 0)) * BLOCK;
  }

  close(): void {
    this.closeWrite();
    if (this.n > 0 && this.finished > this.finishedWritten) this.writeState(null);
  }

  stats(): FlashQueueStats {
    return { bytes: this.usedBytes(), segments: this.n, writes: this.writes, lost: this.lost };
  }

  /** The directory's segments as (first, last or -1 while not complete, length) triples, by first; an older format's file is deleted. */
  private list(): number[] {
    const prefix = this.base + '.';
    const found: number[][] = [];
    let old = -1;
    const entries = new this.iterate(this.dir === '' ? '.' : this.dir);
    for (let e = entries.next(); e !== undefined; e = entries.next()) {
      if (e.length === undefined) continue;
      if (e.name === this.base) old = e.length;
      if (e.name.length <= prefix.length || e.name.slice(0, prefix.length) !== prefix) continue;
      const rest = e.name.slice(prefix.length);
      const dash = rest.indexOf('-');
      const first = wholeNumber(dash < 0 ? rest : rest.slice(0, dash));
      const last = dash < 0 ? -1 : wholeNumber(rest.slice(dash + 1));
      if (first < 0 || (dash >= 0 && last < first)) continue;
      found.push([first, last, e.length]);
    }
    if (old >= 0) {
      this.File.delete(this.dir + this.base);
      this.log?.('flash queue: dropped ' + this.dir + this.base + ', ' + old + ' bytes of the journal of an earlier firmware');
    }
    found.sort((a, b) => a[0] - b[0]);
    const flat: number[] = [];
    for (const f of found) flat.push(f[0], f[1], f[2]);
    return flat;
  }

  private nameOf(i: number): string {
    return this.dir + this.base + '.' + this.first[i] + (this.sealed[i] === 1 ? '-' + this.last[i] : '');
  }

  /** `seq` goes on in the writable segment: it follows its last sample, and the wall clock did not become known since it began. */
  private continues(seq: number): boolean {
    if (!this.writable || seq !== this.last[this.n - 1] + 1) return false;
    // A wall time learnt since the segment began: the rest goes to one that records it.
    if (this.segmentWall === this.segmentWall) return true;
    const lead = this.wallLead();
    return lead !== lead;
  }

  /** Starts a segment for `seq`, completing the writable one: false at the bound. */
  private begin(seq: number, value: SampleValue): boolean {
    // The most a first sample takes: header, resource, time, value.
    const most = HEADER_BYTES + 5 + 9 + 3 + (typeof value === 'string' ? 4 + value.length * 3 : 8);
    if (most > this.segmentBytes) throw new RangeError('flash queue: a sample of ' + most + ' bytes does not fit a segment of ' + this.segmentBytes);
    if (this.n === this.first.length || this.usedBlocks + 1 > this.blockLimit) return false;
    this.seal();
    const i = this.n;
    this.first[i] = seq;
    this.last[i] = seq - 1;
    this.bytes[i] = HEADER_BYTES;
    this.sealed[i] = 0;
    const name = this.nameOf(i);
    // A file of that name is not one of ours (load lists them all): what a crash before its header left.
    if (this.File.exists(name)) this.File.delete(name);
    const file = new this.File(name, true);
    this.segmentWall = this.wallLead();
    try {
      this.writer.begin(file, seq, this.segmentWall);
    } catch (e) {
      file.close();
      this.File.delete(name);
      throw e;
    }
    this.n++;
    this.file = file;
    this.dirty = true;
    this.writable = true;
    this.blocksNow = 1;
    this.capNow = capacityOf(1);
    this.usedBlocks++;
    return true;
  }

  /** The writable segment is complete: committed, and renamed with its last sample. */
  private seal(): void {
    if (!this.writable) return;
    this.closeWrite();
    this.writable = false;
    const i = this.n - 1;
    const open = this.nameOf(i);
    this.sealed[i] = 1;
    // A rename that fails leaves it to be read to its end at the next load.
    if (!this.File.rename(open, this.nameOf(i))) this.sealed[i] = 0;
  }

  /** Opens the writable segment for a burst; one whose file is not as written (a commit that did not happen) is completed as it is. */
  private reopen(): void {
    const k = this.n - 1;
    const file = new this.File(this.nameOf(k), true);
    if (file.length !== this.bytes[k]) {
      file.close();
      this.recover(k, 'its last burst was not committed');
      return;
    }
    file.position = this.bytes[k];
    this.file = file;
  }

  /**
   * The writable segment `k` is not as written (a write failed, or a commit did not happen): it keeps
   * what its file holds in whole records, is completed there, and the samples it lost are said.
   */
  private recover(k: number, why: string): void {
    const file = this.file;
    this.file = null;
    this.dirty = false;
    this.writable = false;
    try {
      file?.close();
    } catch {
      // A failed close loses what it would have committed; what the file holds is read below.
    }
    const wrote = this.last[k];
    const probe = new this.File(this.nameOf(k));
    this.bytes[k] = probe.length;
    probe.close();
    this.curFirst = -1;
    this.walk(k, this.first[k], Infinity, null);
    this.last[k] = this.curSeq - 1;
    const lost = wrote - this.last[k];
    this.lost += lost;
    if (lost > 0) this.log?.('flash queue: ' + why + ' in ' + this.nameOf(k) + '; ' + lost + ' samples lost');
    if (this.last[k] < this.first[k]) this.drop(k);
    else {
      this.writable = true;
      this.seal();
    }
    this.recount();
  }

  private closeWrite(): void {
    const file = this.file;
    if (file === null) return;
    this.file = null;
    file.close();
    if (this.dirty) this.writes++;
    this.dirty = false;
  }

  /** Deletes segment `i`. */
  private drop(i: number): void {
    if (i === this.n - 1 && this.writable) {
      this.closeWrite();
      this.writable = false;
    }
    if (this.first[i] === this.curFirst) this.curFirst = -1;
    const name = this.nameOf(i);
    if (!this.File.delete(name)) this.log?.('flash queue: cannot delete ' + name);
    this.usedBlocks -= blocksFor(this.bytes[i]);
    for (let j = i + 1; j < this.n; j++) {
      this.first[j - 1] = this.first[j];
      this.last[j - 1] = this.last[j];
      this.bytes[j - 1] = this.bytes[j];
      this.sealed[j - 1] = this.sealed[j];
    }
    this.n--;
  }

  private recount(): void {
    let blocks = 0;
    for (let i = 0; i < this.n; i++) blocks += blocksFor(this.bytes[i]);
    this.usedBlocks = blocks;
    if (this.writable) {
      this.blocksNow = blocksFor(this.bytes[this.n - 1]);
      this.capNow = capacityOf(this.blocksNow);
    }
  }

  private writeState(batch: Readonly<InFlight> | null): void {
    this.state.write(this.finished, batch);
    this.finishedWritten = this.finished;
    this.stateOnFlash = true;
    this.writes++;
  }

  private removeState(): void {
    if (!this.stateOnFlash) return;
    this.state.remove();
    this.stateOnFlash = false;
    this.finishedWritten = this.finished;
  }

  /** How far the wall clock is ahead of the host's clock now; NaN when either is unknown. */
  private wallLead(): number {
    const ms = this.wall();
    return this.now !== undefined && ms > WALL_KNOWN ? ms - this.now() : NaN;
  }

  /**
   * Reads segment `i` from sample `from` on (from where reading stopped, when that is not past it),
   * visiting samples until `visited` reaches `max` or `visit` declines one: returns the sequence number of
   * the first sample not taken, or -1 at the segment's end. Without `visit`, it only finds where the whole
   * records end. Bytes that are not a whole record end the segment there, said once.
   */
  private walk(i: number, from: number, max: number, visit: StoredVisit | null): number {
    const r = this.reader;
    const size = this.bytes[i];
    const file = new this.File(this.nameOf(i));
    try {
      if (this.curFirst !== this.first[i] || this.curSeq > from) {
        if (size < HEADER_BYTES || !r.header(chunk(file, 0, HEADER_BYTES, size), 0) || r.firstSeq !== this.first[i]) return this.damaged(i, 0, size);
        this.curFirst = this.first[i];
        this.curOffset = HEADER_BYTES;
        this.curSeq = this.first[i];
        this.curShift = this.shiftOf(i, r.wall);
      }
      let view: DataView | null = null;
      // The file offset of the view's first byte.
      let base = 0;
      for (;;) {
        const at = this.curOffset;
        if (at >= size) return -1;
        if (view === null || at - base >= view.byteLength) {
          view = chunk(file, at, CHUNK, size);
          base = at;
        }
        let length = r.next(view, at - base, view.byteLength);
        if (length < 0 && at - length <= size) {
          // A record across the chunk's end: read again from its start.
          view = chunk(file, at, -length, size);
          base = at;
          length = r.next(view, 0, view.byteLength);
        }
        if (length <= 0) return this.damaged(i, at, size);
        if (r.sample) {
          const seq = this.curSeq;
          if (seq >= from) {
            if (this.visited === max) return seq;
            if (visit !== null && visit(seq, r.resource, r.value, r.at + this.curShift) === false) return seq;
            this.visited++;
          }
          r.take();
          this.curSeq = seq + 1;
        }
        this.curOffset = at + length;
      }
    } finally {
      file.close();
    }
  }

  /**
   * Segment `i` holds no whole record from `at` on (a torn write, or damage): it ends there. Samples it
   * was known to hold past that point are lost, and said.
   */
  private damaged(i: number, at: number, size: number): number {
    if (at === 0) this.curSeq = this.first[i];
    this.curFirst = this.first[i];
    this.curOffset = at;
    const gone = Math.max(0, this.last[i] - this.curSeq + 1);
    this.log?.('flash queue: ' + (size - at) + ' bytes of ' + this.nameOf(i) + ' are not whole records; they are dropped' + (gone > 0 ? ' (' + gone + ' samples)' : ''));
    this.bytes[i] = at;
    this.last[i] = Math.min(this.last[i], this.curSeq - 1);
    this.lost += gone;
    return -1;
  }

  /** What turns segment `i`'s times into this boot's: none for this boot's; the two wall clock leads for an earlier one's. */
  private shiftOf(i: number, wall: number): number {
    if (this.first[i] >= this.bootSeq) return 0;
    return wall - this.wallLead();
  }
}

/** Bytes a file of `blocks` littlefs blocks holds: each block after the first begins with ctz(index) + 1 pointers of 4 bytes (lfs.c, lfs_ctz_extend). */
function capacityOf(blocks: number): number {
  let bytes = 0;
  for (let i = 0; i < blocks; i++) bytes += BLOCK - (i === 0 ? 0 : 4 * (ctz(i) + 1));
  return bytes;
}

/** littlefs blocks a file of `bytes` takes. */
function blocksFor(bytes: number): number {
  let blocks = 0;
  for (let held = 0; held < bytes; blocks++) held += BLOCK - (blocks === 0 ? 0 : 4 * (ctz(blocks) + 1));
  return blocks;
}

function ctz(i: number): number {
  return 31 - Math.clz32(i & -i);
}

/** `count` bytes or more of `file` from `at` (a chunk at least, within `size`), as a view. */
function chunk(file: FileHandle, at: number, count: number, size: number): DataView {
  file.position = at;
  return new DataView(file.read(ArrayBuffer, Math.min(size - at, Math.max(count, CHUNK))));
}

/** A name part of decimal digits as a number; -1 for anything else. */
function wholeNumber(text: string): number {
  if (text === '' || text.length > 15) return -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return -1;
  }
  return Number(text);
}
