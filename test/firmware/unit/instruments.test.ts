// The instrumented build's counters as the ESP32 test and the bench read them from QEMU's UART, where a
// line of another task (or of QEMU itself, on the same pipe) can cut into an `instruments:` line.
import { describe, expect, it } from 'vitest';
import { instrumentColumns } from '../line-log';

const KEY = 'instruments key: Chunk used,Slot used,Stack used,System bytes free';

describe('instrumentColumns', () => {
  it('reads each instruments line by the names of the key line', () => {
    expect(instrumentColumns([KEY, 'instruments: 48500,20160,4304,130408', 'feed-agent: started', 'instruments: 48000,20000,3000,131000'])).toEqual([
      { 'Chunk used': 48500, 'Slot used': 20160, 'Stack used': 4304, 'System bytes free': 130408 },
      { 'Chunk used': 48000, 'Slot used': 20000, 'Stack used': 3000, 'System bytes free': 131000 },
    ]);
  });

  it('leaves out a line cut short or run into by other output, so that no column reads NaN', () => {
    const rows = instrumentColumns([KEY, 'instruments: 48500,20160,4304,130408', 'instruments: 48000,20000,30', '00,131000I (1234) esp_netif', 'instruments: 48000,20000,3000,131000W (99) x']);
    expect(rows).toEqual([{ 'Chunk used': 48500, 'Slot used': 20160, 'Stack used': 4304, 'System bytes free': 130408 }]);
    expect(Math.min(...rows.map((r) => r['System bytes free']))).toBe(130408);
  });
});
