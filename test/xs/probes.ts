// Deterministic workouts of the core's parts, and the property of delivery. Each returns JSON, or a
// promise of it; the XS test runs every probe on Node and inside the worker and requires the same answer,
// so an engine difference in string, regex, number or typed-array behaviour shows up here, named, before
// it shows up in a scenario.
import { checkConfig, ConfigError } from '../../src/core/config';
import { elementIndexOf, redact } from '../../src/core/wire/errors';
import { parseHttpDate, parseRetryAfter } from '../../src/core/wire/retry-after';
import { sameOriginTarget } from '../../src/core/wire/redirect';
import type { SampleValue } from '../../src/core/host/host';
import { SampleQueue } from '../../src/core/queue/queue';
import { createRandom } from '../../src/core/host/random';
import { checkInput, compileRestriction, numericValue, rawData } from '../../src/core/wire/validate';
import { OUTCOMES } from '../support/engine-tables';
import { walkRules } from '../support/engine-walk';
import { impoliteCycles } from '../support/engine-cycles';
import { RULES } from '../../src/core/delivery/rules';
import { OUTAGE_FAULTS, longestWaitAfter } from '../support/outage';
import { runProperty } from '../support/property';
import type { PropertyRun } from '../support/property';
import { encode, push } from '../support/queue-body';

const INPUTS: SampleValue[] = [0, -0, 1, 1.5, -3, 1e21, 1e-7, 123456789.125, NaN, Infinity, true, false, '', '7', ' 7', '1e3', '0x10', '.5', 'on', 'ON', 'off!', 'é', '😀', '\u2028'];

const RESTRICTIONS = [
  { data_restriction_regex: null, data_restriction_begin_range: 0, data_restriction_end_range: 100 },
  { data_restriction_regex: null, data_restriction_begin_range: -5, data_restriction_end_range: 0 },
  { data_restriction_regex: 'on|off', data_restriction_begin_range: 0, data_restriction_end_range: 0 },
  { data_restriction_regex: '/^ON|OFF$/i', data_restriction_begin_range: 0, data_restriction_end_range: 0 },
  { data_restriction_regex: '[0-9]{1,3}', data_restriction_begin_range: 0, data_restriction_end_range: 0 },
  { data_restriction_regex: '/\\p{L}+/u', data_restriction_begin_range: 0, data_restriction_end_range: 0 },
  { data_restriction_regex: '/a.b/s', data_restriction_begin_range: 0, data_restriction_end_range: 0 },
];

/** The time of the fast lane's samples; these probes queue through `push`, which takes its own. */
const clock = { now: (): number => 0 };

function fillQueue(queue: SampleQueue, count: number, base: number): string[] {
  const results: string[] = [];
  for (let i = 0; i < count; i++) {
    const value: SampleValue = i % 5 === 0 ? 'text-' + i + '-é' : i % 7 === 0 ? i % 2 === 0 : base + i * 0.25;
    results.push(String(push(queue, 1 + (i % 3), value, i * 10, i)));
  }
  return results;
}

export const probes: Record<string, () => unknown> = {
  /** Every pair of RULES through a real head, the invariants checked, and each outcome's example classified. */
  rules: () => ({ walk: walkRules(), impolite: impoliteCycles(RULES), examples: Object.keys(OUTCOMES).map((name) => [name, OUTCOMES[name as keyof typeof OUTCOMES].example()]) }),

  /** The longest wait after outages of 20 s and 60 s (test/core/outage.test.ts checks the bound on Node), 3 seeds each. */
  outage: async () => {
    const waits: number[] = [];
    for (const n of [20_000, 60_000]) for (const kind of Object.keys(OUTAGE_FAULTS)) waits.push(await longestWaitAfter(n, OUTAGE_FAULTS[kind], 3));
    return waits;
  },

  /** The property of delivery (test/support/property.ts), 40 seeds of each kind of run. */
  property: async () => {
    const all: PropertyRun[] = [];
    for (const afterCommitOnly of [false, true]) {
      for (const rich of [false, true]) {
        for (let seed = 1; seed <= 40; seed++) all.push(await runProperty(seed, { afterCommitOnly, readFaults: !afterCommitOnly, rich }));
      }
    }
    return all;
  },

  validation: () =>
    RESTRICTIONS.map((r) => {
      const restriction = compileRestriction(r);
      return INPUTS.map((input) => [rawData(input), String(numericValue(input)), checkInput(input, restriction)]);
    }),

  random: () => {
    const next = createRandom(12345);
    const values: number[] = [];
    for (let i = 0; i < 50; i++) values.push(next());
    return values;
  },

  config: () => {
    try {
      checkConfig({ url: 'ftp://x', publicKey: '', token: 7, sensors: [{ resource: 0, every: 0 }], uplink: { batch: 5000, overflow: 'x', extra: 1 } });
      return 'accepted';
    } catch (e) {
      return e instanceof ConfigError ? e.problems : 'not a ConfigError: ' + String(e);
    }
  },

  errors: () => ({
    retryAfter: ['0', ' 12 ', '1234567890', 'Wed, 21 Oct 2015 07:28:00 GMT', '-1', ''].map((v) => parseRetryAfter(v)),
    retryAfterDate: ['Thu, 01 Jan 1970 00:00:05 GMT', 'Fri, 31 Dec 2100 23:59:59 GMT', 'Sunday, 06-Nov-94 08:49:40 GMT', 'Sun Nov  6 08:49:37 1994']
      .map((v) => parseRetryAfter(v, 'Thu, 01 Jan 1970 00:00:00 GMT')),
    httpDate: ['Sun, 06 Nov 1994 08:49:37 GMT', 'Sunday, 06-Nov-94 08:49:37 GMT', 'Sun Nov  6 08:49:37 1994', 'Fri, 01 Jan 2100 00:00:00 GMT', 'Sun, 06 Foo 1994 08:49:37 GMT']
      .map((v) => String(parseHttpDate(v))),
    redirect: ['d', '../../../d', '?y', '/d/./e/..', 'HTTP://H.TEST:80/x', 'https://h.test/x', '//h.test/x#f', '/x y']
      .map((v) => sameOriginTarget('http://h.test/a/b/c?q=1', v)),
    element: ['element 3: resource 99 not found', 'bad element 12: x', 'elements 4: no', 'element x:'].map(elementIndexOf),
    redact: redact('Authorization: Bearer abc.DEF-123== and secret-token and Bearer xyz', 'secret-token'),
  }),

  queue: () => {
    const queue = new SampleQueue({ capacity: 16, overflow: 'drop-oldest', stringBytes: 64, withSeq: true, clock });
    const pushes = fillQueue(queue, 40, 100);
    const first = encode(queue, 0, queue.length);
    queue.lock(4);
    const more = fillQueue(queue, 12, 500);
    queue.shift(3);
    const values: SampleValue[] = [];
    for (let i = 0; i < queue.length; i++) values.push(queue.valueAt(i));
    const refuse = new SampleQueue({ capacity: 4, overflow: 'drop-newest', stringBytes: 8, withSeq: false, clock });
    const refused = fillQueue(refuse, 9, 0).concat(String(push(refuse, 2, 'a string that is too long', 0, 0)));
    return {
      pushes, first, more, values, refused,
      last: encode(queue, 0, queue.length),
      seqs: [queue.seqAt(0), queue.seqAt(queue.length - 1)],
      counters: [queue.length, queue.highWater, queue.droppedOverflow, queue.inFlight, refuse.droppedOverflow, encode(refuse, 0, refuse.length)],
    };
  },

  // The encoder must give exactly JSON.stringify's text, number forms included.
  encoding: () => {
    const numbers = [0, -0, 1e21, 1e-7, 5e-324, 1.7976931348623157e308, 0.1 + 0.2, -123.456, 2 ** 53 + 2];
    const queue = new SampleQueue({ capacity: numbers.length, overflow: 'drop-oldest', stringBytes: 0, withSeq: false, clock });
    for (const n of numbers) push(queue, 4000000000, n, 0, 0);
    const encoded = encode(queue, 0, queue.length);
    return { encoded, same: encoded === JSON.stringify(numbers.map((input) => ({ id_resource: 4000000000, input }))) };
  },
};
