// holdOnRefusedToken: a program serving many devices (the gateway) starts a device whose token the service
// refuses, keeps its readings, and delivers them once the token is accepted; without it, start() rejects.
import { expect, it } from 'vitest';
import { FeedError } from '../../src/core/wire/errors';
import { fakeAgent } from '../support/fake-agent';

const RESOURCES = [{ id: 1, begin: 0, end: 1_000_000 }];

it('rejects start() on a refused token by default', async () => {
  const { agent, service } = fakeAgent(RESOURCES, { sensors: [], resources: [1] }, { flushMs: 1_000 });
  service.token = 'rotated';
  await expect(agent.start()).rejects.toBeInstanceOf(FeedError);
});

it('with holdOnRefusedToken, starts, keeps what it accepts while the token is refused, and delivers it once accepted', async () => {
  const { agent, service, clock } = fakeAgent(RESOURCES, { sensors: [], resources: [1], holdOnRefusedToken: true, lookupRetryMs: 10_000 }, { flushMs: 1_000, authRetryMs: 20_000 });
  const token = service.token;
  service.token = 'rotated';
  await agent.start();
  for (let i = 0; i < 10; i++) expect(agent.record(1, i)).toBe('queued');
  await clock.advance(2_000);
  expect(agent.stats()).toMatchObject({ authPaused: true, queued: 10, sent: 0 });
  service.token = token;
  await clock.advance(30_000);
  expect(agent.stats()).toMatchObject({ authPaused: false, queued: 0, sent: 10 });
  expect(service.stored(1)).toEqual(Array.from({ length: 10 }, (_, i) => i));
});
