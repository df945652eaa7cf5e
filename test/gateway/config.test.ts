// The config file: every mistake is reported at once, by parseGatewayConfig and by `feed-agent gateway`
// (exit 2); a secret's value is never quoted.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

import { GatewayConfigError, parseGatewayConfig } from '../../src/gateway';
import { workDir } from '../support/build';

const run = promisify(execFile);

// One of every kind of mistake, each expected in the report.
const BAD = {
  service: { url: 'ftp://example', requestsPerSecond: 0, extra: 1 },
  queue: { fsync: 'sometimes' },
  mqtt: { url: 'http://broker', caFile: 'no-such-ca.pem', subscribe: ['a/#/b'] },
  modbus: { plc: { port: 70000, unitId: 300 } },
  status: { everyS: -1 },
  metrics: { port: 'x' },
  devices: [
    {
      name: 'bay-1',
      publicKey: 'K1',
      tokenEnv: 'NOT_SET_ANYWHERE',
      silenceS: 0,
      overflowMiB: -1,
      lastWill: { topic: 'x/+y' },
      resources: [
        { id: 1, mqtt: { topic: 'a/b', field: '' } },
        { id: 1, mqtt: { topic: 'a/c' } },
        { id: 2 },
        { id: 3, mqtt: { topic: 'a' }, modbus: { source: 'plc', kind: 'coil', address: 0 } },
        { id: 4, modbus: { source: 'nowhere', kind: 'register', address: -1, type: 'int64', wordOrder: 'middle', everyMs: 1 } },
        { id: 5, command: { mqtt: { topic: 'cmd/+' } } },
        { id: 6, command: { modbus: { source: 'plc', kind: 'input-register', address: 1 } } },
        { id: -7, mqtt: { topic: 'ok' } },
        { id: 8, mqtt: { topic: 'door' }, report: { deadband: -1, heartbeatMs: 0, aggregate: 'median', every: 5 } },
        { id: 9, command: { mqtt: { topic: 'cmd/9' } }, report: { deadband: 0 } },
      ],
    },
    // An old config's `overflowMiB: 0` (no overflow) names what it means now.
    { publicKey: 'K1', tokenFile: 'no-such-token-file', overflowMiB: 0, resources: [] },
    { publicKey: 'K3', token: 'written-in-the-config', resources: [{ id: 1, mqtt: { topic: 't' } }] },
  ],
};

const EXPECTED = [
  'service.url: expected an http:// or https:// URL, got "ftp://example"',
  'service.extra: unknown key',
  'service.requestsPerSecond: expected a number ≥ 0.01, got 0',
  'queue.dir: required',
  'queue.fsync: expected one of "always", "interval", "never", got "sometimes"',
  'mqtt.url: expected mqtt://HOST[:PORT] or mqtts://HOST[:PORT], got "http://broker"',
  'mqtt.caFile: only for an mqtts:// broker',
  'mqtt.caFile: cannot read',
  'mqtt.subscribe[0]: "a/#/b" is not a topic filter',
  'modbus.plc.host: required',
  'modbus.plc.port: expected an integer from 1 to 65535, got 70000',
  'modbus.plc.unitId: expected an integer from 0 to 255, got 300',
  'status.everyS: expected a number ≥ 0, got -1',
  'metrics.port: expected an integer from 0 to 65535, got "x"',
  'devices[0] (bay-1).tokenEnv: the environment variable NOT_SET_ANYWHERE is not set or empty',
  'devices[0] (bay-1).lastWill.topic: "x/+y" is not a topic filter',
  'devices[0] (bay-1).resources[0] (1).mqtt.field: expected a non-empty string, got ""',
  'devices[0] (bay-1).resources[1] (1): resource 1 is listed twice',
  'devices[0] (bay-1).resources[2] (2): expected exactly one of "mqtt", "modbus", "command", got none',
  'devices[0] (bay-1).resources[3] (3): expected exactly one of "mqtt", "modbus", "command", got mqtt, modbus',
  'devices[0] (bay-1).resources[4] (4).modbus.source: "nowhere" is not one of "modbus" (plc)',
  'devices[0] (bay-1).resources[4] (4).modbus.kind: expected one of "coil", "discrete-input", "input-register", "holding-register", got "register"',
  'devices[0] (bay-1).resources[4] (4).modbus.address: expected an integer from 0 to 65535, got -1',
  'devices[0] (bay-1).resources[4] (4).modbus.type: expected one of "int16", "uint16", "int32", "uint32", "float32", got "int64"',
  'devices[0] (bay-1).resources[4] (4).modbus.wordOrder: expected one of "high-first", "low-first", got "middle"',
  'devices[0] (bay-1).resources[4] (4).modbus.everyMs: expected an integer from 10 up, got 1',
  'devices[0] (bay-1).resources[5] (5).command.mqtt.topic: a topic to publish to has no wildcard, got "cmd/+"',
  'devices[0] (bay-1).resources[6] (6).command.modbus.kind: expected one of "coil", "holding-register", got "input-register"',
  'devices[0] (bay-1).resources[7].id: expected an integer from 1 up, got -7',
  'devices[0] (bay-1).resources[8] (8).report.every: unknown key',
  'devices[0] (bay-1).resources[8] (8).report.deadband: expected',
  'devices[0] (bay-1).resources[8] (8).report.heartbeatMs: expected',
  'devices[0] (bay-1).resources[8] (8).report.aggregate: expected "mean", "min" or "max", got "median"',
  'devices[0] (bay-1).resources[9] (9).report: a command resource takes no readings to report',
  'devices[0] (bay-1).silenceS: expected a number ≥ 1, got 0',
  'devices[0] (bay-1).overflowMiB: expected a number ≥ 0.001, got -1',
  'devices[1] (K1).publicKey: K1 is served twice',
  'devices[1] (K1).tokenFile: cannot read no-such-token-file: ENOENT',
  'devices[1] (K1).overflowMiB: 0 turned the overflow off; there is no overflow of its own any more: the readings its queue in memory cannot hold wait in its durable queue on disk, which overflowMiB now bounds',
  'devices[2].token: unknown key',
  'devices[2] (K3).tokenEnv or tokenFile: required (a token is never written in the config)',
];

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
      expect(c.devices[0]).toMatchObject({ queue: 1024, overflowBytes: 64 * 1024 * 1024 });
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

describe('feed-agent gateway', () => {
  const work = workDir('gw-cli-');
  let cli = '';
  beforeAll(() => {
    cli = join(inject('built'), 'cli.js');
  });
  afterAll(work.remove);

  it('exits 2 listing every mistake of a config', async () => {
    const file = join(work.dir, 'bad.json');
    writeFileSync(file, JSON.stringify(BAD));
    const result = await run(process.execPath, [cli, 'gateway', '--config', file]).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(result.code).toBe(2);
    for (const line of EXPECTED) expect(result.stderr).toContain(line);
    expect(result.stderr).not.toContain('written-in-the-config');
  });

  it('names what to install when the config needs a protocol library that is missing', async () => {
    const file = join(work.dir, 'needs-peers.json');
    writeFileSync(
      file,
      JSON.stringify({
        service: { url: 'http://127.0.0.1:9' },
        queue: { dir: 'q' },
        mqtt: { url: 'mqtt://127.0.0.1:9' },
        modbus: { plc: { host: '127.0.0.1' } },
        metrics: false,
        devices: [{ publicKey: 'K', tokenEnv: 'T', resources: [{ id: 1, mqtt: { topic: 't' } }, { id: 2, modbus: { source: 'plc', kind: 'coil', address: 0 } }] }],
      }),
    );
    const hooks = join(import.meta.dirname, 'fixtures', 'without-peers.mjs');
    const result = await run(process.execPath, ['--import', hooks, cli, 'gateway', '--config', file], { env: { ...process.env, T: 'token' } }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('this config needs mqtt and modbus-serial, not installed: npm install mqtt modbus-serial');
  });

  it('states its guarantees in --help', async () => {
    const { stdout } = await run(process.execPath, [cli, 'gateway', '--help']);
    expect(stdout).toMatch(/PUBACK/);
    expect(stdout).toMatch(/kill -9/);
    expect(stdout).toMatch(/power cut/);
    expect(stdout).toMatch(/SIGHUP/);
  });
});
