// The tests of real builds read the firmware's status line with readStatus: here it reads what the
// firmware's own formatter writes.
import { describe, expect, it } from 'vitest';
import { statusLine } from '../../../platforms/moddable/firmware/status';
import type { AgentStats } from '../../../src/core/agent';
import { lastStatus, readStatus } from '../status-line';

const STATS = { queued: 6001, capacity: 1024, accepted: 7240, sent: 1200, batches: 24, retries: 31, droppedOverflow: 2, rejectedInvalid: 1, setAside: 3, unresolved: 4, requests: 80, commands: 0, heldBack: 5, authPaused: false, lastError: 'network error' } as unknown as AgentStats;

describe('readStatus', () => {
  it('reads the counts of the line the firmware prints, whatever follows them', () => {
    const line = statusLine(STATS, ['SHT3x at 0x44 on pins 4/5']).trimEnd();
    expect(readStatus(line)).toEqual({ queued: 6001, accepted: 7240, sent: 1200, retries: 31, dropped: 2, setAside: 3, unresolved: 4, requests: 80 });
    expect(readStatus('feed-agent: started')).toBeNull();
  });

  it('finds the newest status line from an index on', () => {
    const lines = [statusLine({ ...STATS, sent: 1 }), 'x', statusLine({ ...STATS, sent: 2 }), 'heaps: slot 1 chunk 2'].map((l) => l.trimEnd());
    expect(lastStatus(lines)?.sent).toBe(2);
    expect(lastStatus(lines, 3)).toBeNull();
  });
});
