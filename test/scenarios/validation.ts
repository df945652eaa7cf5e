// The subtype rule at the source: a reading that breaks it is refused by record() and counted, never
// queued; what passes (numbers, numeric strings, text with any characters) is stored exactly as read.
import type { SampleValue } from '../../src/core';
import { equal } from './assert';
import { settle, startAgent } from './helpers';
import type { Scenario } from './run';
import { R } from './seed';

const READINGS: [number, SampleValue, boolean][] = [
  [R.mode, 'on', true],
  [R.mode, 'maybe', false],
  [R.mode, true, false],
  [R.percent, 99.5, true],
  [R.percent, 101, false],
  [R.percent, NaN, false],
  [R.percent, '42', true],
  [R.percent, 'forty', false],
  [R.label, 'température 😀', true],
  [R.label, '', true],
  [R.label, 'x'.repeat(41), false],
  [R.label, 'line\nbreak', false],
  [R.mode, 'off', true],
];

export const validationScenarios: Scenario[] = [
  {
    name: 'validation: readings that break their subtype are refused at the source; the rest arrive as read',
    async run(ctx) {
      const agent = await startAgent(ctx, { resources: [R.mode, R.percent, R.label] });
      equal(READINGS.map(([resource, value]) => agent.record(resource, value)), READINGS.map(([, , accepted]) => (accepted ? 'queued' : 'refused')), 'record() results');
      equal(await settle(ctx, agent.flush()), true, 'flush() result');
      const stats = agent.stats();
      const refused = READINGS.filter(([, , accepted]) => !accepted).length;
      equal([stats.rejectedInvalid, stats.sent, stats.setAside], [refused, READINGS.length - refused, 0], '[rejectedInvalid, sent, setAside]');
      for (const resource of [R.mode, R.percent, R.label]) {
        const expected = READINGS.filter(([r, , accepted]) => r === resource && accepted).map(([, value]) => value);
        equal(await ctx.service.values(resource), expected, 'stored values of resource ' + resource);
      }
      equal(ctx.logs.filter((line) => line.indexOf('warn:') === 0).length, 3, 'warnings (one per resource with a refused reading)');
      await settle(ctx, agent.stop());
    },
  },
];
