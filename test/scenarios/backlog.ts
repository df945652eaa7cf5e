// A storage that holds a backlog: the queue in memory is a window onto it. An outage many times longer
// than the window loses nothing while the storage has room, and delivers oldest first once the service is
// back, at the default settings; at the storage's bound each overflow policy keeps what it promises; a
// restart reads no more than the window from storage and the rest as batches leave.
import { createAgent } from '../../src/core';
import type { OverflowPolicy } from '../../src/core';
import { memoryBacklog } from '../support/memory-backlog';
import { equal, ok } from './assert';
import { agentConfig, holdsInOrder, killable, settle } from './helpers';
import type { Scenario } from './run';
import { R, SERVICE_EPOCH_MS } from './seed';

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** The window the scenarios give the agent, in samples. */
const WINDOW = 16;

const outage: Scenario = {
  name: 'backlog: an outage ten times the queue in memory: every sample is kept in storage and arrives in order once the service is back',
  async run(ctx) {
    const storage = memoryBacklog(8, 100);
    const agent = createAgent({ ...ctx.host, storage }, agentConfig(ctx, { uplink: { queue: WINDOW, batch: 10 } }));
    await settle(ctx, agent.start());
    await ctx.down(true);
    const results: string[] = [];
    for (const v of range(1, 160)) {
      results.push(agent.record(R.counterA, v));
      await ctx.clock.advance(100);
    }
    equal(results, range(1, 160).map(() => 'queued'), 'record() results');
    const s = agent.stats();
    equal([s.queued, s.backlog, s.capacity, s.highWater, s.droppedOverflow, s.accepted], [160, 144, WINDOW, WINDOW, 0, 160],
      '[queued, backlog, capacity, highWater, droppedOverflow, accepted] during the outage');
    equal(storage.held(), range(1, 160), 'samples in storage');
    await ctx.down(false);
    // At the default backoff: the retry after a 16 s outage comes within 16 s, then batch after batch.
    equal(await settle(ctx, agent.flush(), 30_000), true, 'flush() once the service is back, the backlog with it');
    equal([agent.stats().sent, agent.stats().queued, agent.stats().backlog], [160, 0, 0], '[sent, queued, backlog]');
    await holdsInOrder(ctx, R.counterA, range(1, 160), 0);
    equal((await ctx.service.values(R.counterA)).length, 160, 'feeds stored');
    equal(storage.held(), [], 'samples left in storage');
    await settle(ctx, agent.stop());
  },
};

function atBound(policy: OverflowPolicy, results: string[], kept: number[], dropped: number): Scenario {
  return {
    name: 'backlog: at the bound of the storage, ' + policy + ' keeps what it promises and counts the rest',
    async run(ctx) {
      // Four segments of 8: the window's 16 samples and 16 more.
      const storage = memoryBacklog(8, 4);
      const agent = createAgent({ ...ctx.host, storage }, agentConfig(ctx, { uplink: { queue: WINDOW, batch: 10, overflow: policy } }));
      await settle(ctx, agent.start());
      await ctx.down(true);
      const got: string[] = [];
      for (const v of range(1, 50)) {
        got.push(agent.record(R.counterA, v));
        await ctx.clock.advance(100);
      }
      equal(got, results, 'record() results');
      equal([agent.stats().droppedOverflow, agent.stats().queued], [dropped, kept.length], '[droppedOverflow, queued]');
      let room = false;
      void agent.whenRoom().then(() => (room = true));
      await ctx.clock.advance(1_000);
      equal(room, false, 'whenRoom() resolved while nothing left');
      await ctx.down(false);
      ok(await ctx.clock.advanceUntil(() => room, 30_000), 'whenRoom() resolves once samples leave');
      equal(agent.record(R.counterA, 51), 'queued', 'record() once there is room');
      equal(await settle(ctx, agent.flush(), 30_000), true, 'flush()');
      await holdsInOrder(ctx, R.counterA, [...kept, 51], 0);
      await settle(ctx, agent.stop());
    },
  };
}

const restart: Scenario = {
  name: 'backlog: a restart reads the window from storage and the rest as batches leave; everything arrives once, in order',
  async run(ctx) {
    const storage = memoryBacklog(8, 100);
    const first = killable(ctx.host);
    const killed = createAgent({ ...first.host, storage }, agentConfig(ctx, { uplink: { queue: WINDOW, batch: 10 } }));
    await settle(ctx, killed.start());
    await ctx.down(true);
    for (const v of range(1, 100)) {
      killed.record(R.counterA, v);
      await ctx.clock.advance(50);
    }
    first.kill();
    // The process died: its clock with it, and the storage knows no wall clock to carry the times over.
    storage.restart(false);
    await ctx.down(false);
    const agent = createAgent({ ...ctx.host, storage }, agentConfig(ctx, { uplink: { queue: WINDOW, batch: 10, maxLatencyMs: 10_000 } }));
    let visited = 0;
    const load = storage.load;
    storage.load = (visit, max) => load((...a) => (visited++, visit(...a)), max);
    await settle(ctx, agent.start());
    equal(visited, WINDOW, 'samples read from storage at start');
    equal(await settle(ctx, agent.flush(), 60_000), true, 'flush()');
    await holdsInOrder(ctx, R.counterA, range(1, 100), 0);
    equal((await ctx.service.values(R.counterA)).length, 100, 'feeds stored');
    equal([agent.stats().undated, agent.stats().sent], [100, 100], '[undated, sent]');
    await settle(ctx, agent.stop());
  },
};

/** The service's `created_at` for virtual time `t` (its clock follows the scenario's), to the second. */
function createdAt(t: number): string {
  return new Date(Math.floor((SERVICE_EPOCH_MS + t) / 1_000) * 1_000).toISOString().replace('T', ' ').slice(0, 19);
}

const ages: Scenario = {
  name: 'backlog: with ages on, a backlog delivered after an outage and a restart is stored at the times it was sampled',
  async run(ctx) {
    const storage = memoryBacklog(8, 100);
    const uplink = { queue: WINDOW, batch: 10, sendAge: true };
    const first = killable(ctx.host);
    const killed = createAgent({ ...first.host, storage }, agentConfig(ctx, { uplink }));
    await settle(ctx, killed.start());
    await ctx.down(true);
    const sampledAt: number[] = [];
    for (const v of range(1, 40)) {
      sampledAt.push(ctx.clock.now());
      killed.record(R.counterA, v);
      await ctx.clock.advance(1_500);
    }
    // A restart whose storage carries the times over (as a disk with a wall clock does).
    first.kill();
    await ctx.clock.advance(30_000);
    await ctx.down(false);
    const agent = createAgent({ ...ctx.host, storage }, agentConfig(ctx, { uplink }));
    await settle(ctx, agent.start());
    equal(await settle(ctx, agent.flush(), 60_000), true, 'flush()');
    await holdsInOrder(ctx, R.counterA, range(1, 40), 0);
    const [firstFeed] = await ctx.service.firstFeeds([R.counterA]);
    const [lastFeed] = await ctx.service.lastFeeds([R.counterA]);
    equal([firstFeed?.created_at, lastFeed?.created_at], [createdAt(sampledAt[0]), createdAt(sampledAt[39])], '[created_at] of the first and last feed');
    equal(agent.stats().undated, 0, 'undated');
    await settle(ctx, agent.stop());
  },
};

export const backlogScenarios: Scenario[] = [
  outage,
  atBound('drop-newest', range(1, 50).map((v) => (v <= 32 ? 'queued' : 'full')), range(1, 32), 18),
  // The oldest segments beyond the window go: 17-24 for 33, 25-32 for 41, 33-40 for 49.
  atBound('drop-oldest', range(1, 50).map(() => 'queued'), [...range(1, 16), ...range(41, 50)], 24),
  restart,
  ages,
];
