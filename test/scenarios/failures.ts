// Each failure class of operation 4 whose outcome is known: what the agent counts, when it tries again,
// and what the service ends up holding (everything, once). Unknown outcomes are in reconcile.ts.
import { atLeast, atMost, equal, ok } from './assert';
import { creates, drained, holdsInOrder, lostAnswer, recordRun, settle, startAgent } from './helpers';
import type { Scenario } from './run';
import { R } from './seed';

export const failureScenarios: Scenario[] = [
  {
    name: 'failure: refused connections are retried until the service is back',
    async run(ctx) {
      const agent = await startAgent(ctx, { uplink: { flushMs: 1_000 } });
      await ctx.down(true);
      const values = recordRun(agent, R.counterA, 1, 5);
      equal(await settle(ctx, agent.flush()), false, 'flush() while the service is unreachable');
      await ctx.clock.advance(20_000);
      const failed = creates(ctx);
      atLeast(failed.length, 3, 'attempts while down');
      ok(failed.every((r) => r.outcome === 'network'), 'every attempt while down failed to connect');
      equal([agent.stats().queued, agent.stats().ambiguous], [5, 0], '[queued, ambiguous] while down');
      await ctx.down(false);
      await drained(ctx, agent);
      const stats = agent.stats();
      equal([stats.sent, stats.ambiguous, stats.retries], [5, 0, failed.length], '[sent, ambiguous, retries]');
      await holdsInOrder(ctx, R.counterA, values, 0);
      await settle(ctx, agent.stop());
    },
  },
  lostAnswer('failure: a timeout before the service saw the batch is retried, nothing repeated', { do: 'hold', after: false }, 'timeout'),
  lostAnswer('failure: a reset before the service saw the batch is retried, nothing repeated', { do: 'reset', after: false }, 'network'),
  {
    name: 'failure: 5xx is retried with jittered exponential backoff',
    async run(ctx) {
      const agent = await startAgent(ctx, { uplink: { flushMs: 1, backoffBaseMs: 1_000 } });
      await ctx.faults({ op: 'create', times: 2, action: { do: 'status', status: 503 } });
      const values = recordRun(agent, R.counterA, 1, 5);
      await drained(ctx, agent);
      const attempts = creates(ctx);
      equal(attempts.map((r) => r.outcome), ['503', '503', '200'], 'outcomes');
      // The n-th retry waits at least half of base·2^n and less than it.
      atLeast(attempts[1].t - attempts[0].t, 500, 'wait before the first retry');
      atMost(attempts[1].t - attempts[0].t, 999, 'wait before the first retry');
      atLeast(attempts[2].t - attempts[1].t, 1_000, 'wait before the second retry');
      atMost(attempts[2].t - attempts[1].t, 1_999, 'wait before the second retry');
      equal([agent.stats().retries, agent.stats().ambiguous], [2, 0], '[retries, ambiguous]');
      await holdsInOrder(ctx, R.counterA, values, 0);
      await settle(ctx, agent.stop());
    },
  },
  {
    name: 'failure: 429 Retry-After is honoured, flush() included',
    async run(ctx) {
      const agent = await startAgent(ctx, { uplink: { flushMs: 1 } });
      await ctx.faults({ op: 'create', action: { do: 'status', status: 429, retryAfter: '20' } });
      const values = recordRun(agent, R.counterA, 1, 5);
      await ctx.clock.advance(5_000);
      equal(await settle(ctx, agent.flush()), false, 'flush() during Retry-After');
      await drained(ctx, agent);
      const attempts = creates(ctx);
      equal(attempts.map((r) => r.outcome), ['429', '200'], 'outcomes');
      atLeast(attempts[1].t - attempts[0].t, 20_000, 'wait after Retry-After: 20');
      await holdsInOrder(ctx, R.counterA, values, 0);
      await settle(ctx, agent.stop());
    },
  },
  {
    name: 'failure: a Retry-After date is measured from the answer\'s own Date, however far off the service\'s clock',
    async run(ctx) {
      const agent = await startAgent(ctx, { uplink: { flushMs: 1 } });
      // 5 s apart in the service's clock, read in 1970 and in 2100: the device's own clock plays no part.
      await ctx.faults(
        { op: 'create', action: { do: 'status', status: 503, retryAfter: 'Thu, 01 Jan 1970 00:00:05 GMT', date: 'Thu, 01 Jan 1970 00:00:00 GMT' } },
        { op: 'create', action: { do: 'status', status: 503, retryAfter: 'Fri, 31 Dec 2100 23:59:59 GMT', date: 'Fri, 31 Dec 2100 23:59:54 GMT' } },
      );
      const values = recordRun(agent, R.counterA, 1, 5);
      await drained(ctx, agent);
      const attempts = creates(ctx);
      equal(attempts.map((r) => r.outcome), ['503', '503', '200'], 'outcomes');
      // The service named a moment 4 to 5 s after its answer: never sooner than 5 s is never too early.
      atLeast(attempts[1].t - attempts[0].end, 5_000, 'wait after a Retry-After date of 1970');
      atLeast(attempts[2].t - attempts[1].end, 5_000, 'wait after a Retry-After date of 2100');
      await holdsInOrder(ctx, R.counterA, values, 0);
      await settle(ctx, agent.stop());
    },
  },
  {
    name: 'failure: a 307 to the same origin is followed at once, with the same body and token',
    async run(ctx) {
      const agent = await startAgent(ctx, { uplink: { flushMs: 1 } });
      // Relative to the request's path: `feeds` is operation 4's own path again.
      await ctx.faults({ op: 'create', action: { do: 'status', status: 307, location: 'feeds' } }, { op: 'create', action: { do: 'status', status: 308, location: ctx.url + '/api/device/' + ctx.publicKey + '/resources/feeds' } });
      const values = recordRun(agent, R.counterA, 1, 5);
      equal(await settle(ctx, agent.flush()), true, 'flush() through two redirects');
      const attempts = creates(ctx);
      equal(attempts.map((r) => [r.t, r.outcome, r.body === attempts[0].body]), [[attempts[0].t, '307', true], [attempts[0].t, '308', true], [attempts[0].t, '200', true]], '[t, outcome, same body]');
      const stats = agent.stats();
      equal([stats.sent, stats.retries, stats.authPaused], [5, 0, false], '[sent, retries, authPaused]');
      await holdsInOrder(ctx, R.counterA, values, 0);
      await settle(ctx, agent.stop());
    },
  },
  {
    name: 'failure: a redirect to another origin is reported with its Location and not followed; nothing queued is lost',
    async run(ctx) {
      const agent = await startAgent(ctx, { uplink: { flushMs: 1, authRetryMs: 60_000 } });
      const elsewhere = 'http://127.0.0.1:1/api/device/' + ctx.publicKey + '/resources/feeds';
      await ctx.faults({ op: 'create', action: { do: 'status', status: 307, location: elsewhere } }, { op: 'create', action: { do: 'status', status: 301, location: '/v2/feeds' } });
      const values = recordRun(agent, R.counterA, 1, 5);
      equal(await settle(ctx, agent.flush()), false, 'flush() redirected elsewhere');
      ok(ctx.logs.some((line) => line.indexOf(elsewhere) >= 0), 'the log names the Location');
      equal([creates(ctx).length, ctx.requests.every((r) => r.path.charAt(0) === '/'), agent.stats().queued], [1, true, 5], '[operation-4 requests, every one to the service, queued]');
      await drained(ctx, agent);
      equal(creates(ctx).map((r) => r.outcome), ['307', '301', '200'], 'outcomes');
      ok(ctx.logs.some((line) => line.indexOf('/v2/feeds') >= 0), 'the log names the 301\'s Location');
      await holdsInOrder(ctx, R.counterA, values, 0);
      await settle(ctx, agent.stop());
    },
  },
  {
    name: 'failure: 413 halves the batch',
    async run(ctx) {
      const agent = await startAgent(ctx, { uplink: { batch: 40 } });
      await ctx.faults({ op: 'create', action: { do: 'status', status: 413 } });
      const values = recordRun(agent, R.counterA, 1, 40);
      await drained(ctx, agent);
      equal(creates(ctx).map((r) => [r.elements, r.outcome]), [[40, '413'], [20, '200'], [20, '200']], '[elements, outcome] per request');
      equal([agent.stats().batchLimit, agent.stats().sent], [20, 40], '[batchLimit, sent]');
      await holdsInOrder(ctx, R.counterA, values, 0);
      await settle(ctx, agent.stop());
    },
  },
  {
    name: 'failure: 401 pauses sending until the token is accepted again',
    async run(ctx) {
      const agent = await startAgent(ctx, { uplink: { flushMs: 1, authRetryMs: 60_000 } });
      await ctx.faults({ op: 'create', always: true, action: { do: 'status', status: 401, message: 'the token is not this device\'s' } });
      const values = recordRun(agent, R.counterA, 1, 5);
      equal(await settle(ctx, agent.flush()), false, 'flush() with a refused token');
      ok(agent.stats().authPaused, 'authPaused after a 401');
      await ctx.clock.advance(50_000);
      equal(creates(ctx).length, 1, 'operation-4 requests during the pause');
      await ctx.clearFaults();
      await drained(ctx, agent);
      const attempts = creates(ctx);
      equal(attempts.map((r) => r.outcome), ['401', '200'], 'outcomes');
      atLeast(attempts[1].t - attempts[0].t, 60_000, 'wait after the 401');
      const stats = agent.stats();
      equal([stats.authPaused, stats.sent, stats.queued], [false, 5, 0], '[authPaused, sent, queued]');
      await holdsInOrder(ctx, R.counterA, values, 0);
      await settle(ctx, agent.stop());
    },
  },
];
