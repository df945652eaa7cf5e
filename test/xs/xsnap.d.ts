// The part of @agoric/xsnap's API the harness uses (the package ships JavaScript without declarations).
declare module '@agoric/xsnap' {
  import type { spawn } from 'node:child_process';

  export interface MeterUsage {
    currentHeapCount: number | null;
    compute: number | null;
    allocate: number | null;
  }

  export interface XSnap {
    evaluate(code: string): Promise<{ reply: Uint8Array; meterUsage: MeterUsage }>;
    close(): Promise<void>;
  }

  export function xsnap(options: {
    os: string;
    spawn: typeof spawn;
    fs: object;
    name?: string;
    meteringLimit?: number;
    stdout?: 'ignore' | 'inherit' | 'pipe';
    stderr?: 'ignore' | 'inherit' | 'pipe';
    handleCommand?: (message: Uint8Array) => Promise<Uint8Array>;
  }): Promise<XSnap>;
}
