// The service at its default timeouts keeps an idle connection open past an agent's 5 s command poll, so
// a device polling against `feed-agent serve` reuses its connection instead of reconnecting (on a device,
// a TLS handshake) almost every request.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startService } from '../../../src/service';
import type { RunningService } from '../../../src/service';
import { exchange } from '../../service/raw';
import { A, SEED } from '../../service/fixtures';

let service: RunningService;

beforeAll(async () => {
  service = await startService({ seed: SEED });
});
afterAll(() => service.close());

// 8 s: past Node's old 5 s and the 1 s it adds before closing.
it('answers a second request on a connection left idle for 8 s', async () => {
  const get = `GET /api/device/${A.key}/resource/73 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
  const { responses, closed } = await exchange(service.port, [get, get], { gapMs: 8000, limitMs: 9000 });
  expect(responses.map((r) => r.status)).toEqual([200, 200]);
  expect(closed).toBe(false);
}, 12_000);
