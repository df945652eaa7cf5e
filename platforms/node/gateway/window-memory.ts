// The memory of the gateway's devices' windows (their queues in memory): regions lent from a few large
// buffers (Host['memory']), instead of one allocation a queue in the C allocator's main heap, between the
// short-lived allocations made while the devices started, where the heap keeps the holes. A queue takes a
// region of each size its ring grows or shrinks to (32 readings, 64, ... up to `devices[].queue`) and gives
// the one it left back at once. Measured at 10,000 devices (docs/gateway.md, "A device at 10,000"): with
// queues of 1,024 readings, fixed, 39.2 KB a device against 50.8 for a buffer each.

/** Regions a buffer holds: 64 rings of 32 readings make a buffer of 190 KB, of 256 about 600 KB. */
const REGIONS_PER_BUFFER = 64;

interface Size {
  /** The buffer regions are cut from, and how many of it are cut. */
  buffer: ArrayBuffer | null;
  cut: number;
  /** Regions given back, zeroed, to lend again. */
  free: Uint8Array[];
}

export class WindowMemory {
  /** By region size in bytes (a multiple of 8): devices with another `queue` have windows of another size. */
  private readonly sizes = new Map<number, Size>();

  /** `bytes` zeroed bytes at an offset that is a multiple of 8, for one queue, until `give` returns them. */
  take(bytes: number): Uint8Array {
    const stride = Math.ceil(bytes / 8) * 8;
    let size = this.sizes.get(stride);
    if (size === undefined) this.sizes.set(stride, (size = { buffer: null, cut: 0, free: [] }));
    const reused = size.free.pop();
    if (reused !== undefined) return reused.subarray(0, bytes);
    if (size.buffer === null || size.cut === REGIONS_PER_BUFFER) {
      size.buffer = new ArrayBuffer(stride * REGIONS_PER_BUFFER);
      size.cut = 0;
    }
    return new Uint8Array(size.buffer, stride * size.cut++, bytes);
  }

  /** A region a queue moved out of, or a stopped device's: zeroed, and lent to the next queue of its size. */
  give(region: Uint8Array): void {
    const stride = Math.ceil(region.byteLength / 8) * 8;
    const whole = new Uint8Array(region.buffer, region.byteOffset, stride);
    whole.fill(0);
    (this.sizes.get(stride) as Size).free.push(whole);
  }
}
