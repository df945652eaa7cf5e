// The config file: every mistake is reported at once by parseGatewayConfig, and a secret's value is never
// quoted (cli.test.ts: the same through `feed-agent gateway`). In-process: the unit project.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { GatewayConfigError, parseGatewayConfig } from '../../../platforms/node/gateway';
import { workDir } from '../../support/build';
import { BAD, EXPECTED } from '../fixtures/bad-config';

describe('parseGatewayConfig', () => {
  it('lists every mistake at once', () => {
    let error: unknown;
    try {
      parseGatewayConfig(BAD, {}, '/nowhere');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(GatewayConfigError);
    const problems = (error as GatewayConfigError).problems;
    for (const line of EXPECTED) expect(problems.some((p) => p.startsWith(line)), `${line}\nin:\n${problems.join('\n')}`).toBe(true);
    expect(problems.join('\n')).not.toContain('written-in-the-config');
  });

  it('fills in the defaults of a minimal config and reads a token from a file', () => {
    const work = workDir('gw-config-');
    try {
      writeFileSync(join(work.dir, 'bay.token'), 'secret-token\n');
      const c = parseGatewayConfig(
        { service: { url: 'http://127.0.0.1:8080' }, queue: { dir: 'q' }, devices: [{ publicKey: 'K', tokenFile: 'bay.token', resources: [{ id: 1, modbus: { source: 'p', kind: 'coil', address: 0 } }] }], modbus: { p: { host: '127.0.0.1' } } },
        {},
        work.dir,
      );
      expect(c.devices[0].token).toBe('secret-token');
      expect(c.devices[0]).toMatchObject({ queue: 256, overflowBytes: 64 * 1024 * 1024 });
      expect(c.queue).toEqual({ dir: join(work.dir, 'q'), fsync: 'interval', fsyncIntervalMs: 1000 });
      expect(c.metrics).toEqual({ host: '127.0.0.1', port: 9464 });
      expect(c.devices[0].resources[0].modbus).toMatchObject({ kind: 'coil', everyMs: 1000, scale: 1, offset: 0 });
      // Without a report rule every reading goes.
      expect(c.devices[0].resources[0].report).toBeUndefined();
    } finally {
      work.remove();
    }
  });
});
