// Overload on XS, short (the long run: `npm run soak`): samples keep coming into a full queue whose batch
// the service never answers; the agent's live slots stay where they were and the drop counter is exact.
import { expect, it } from 'vitest';
import { overloadProblems } from '../../soak/overload';
import { xsOverload } from '../../soak/overload-xs';

it('keeps its live slots constant and counts every dropped sample while 100,000 samples overflow a queue of 1,024', async () => {
  expect(overloadProblems(null, await xsOverload(100_000, 5))).toEqual([]);
}, 60_000);
