// Politeness as a property of the delivery table (src/core/delivery/rules.ts): every cycle of the engine's graph
// that passes through a failure must pass through a wait that grows with the attempts, or through a
// success (samples stored: the attempt count starts again, and the queue is the cycle's bound). Else a
// platform that keeps failing that way is asked again and again without a pause: the retry storm of a
// partial outage, where writes are reset and reads answered. The graph's nodes are the states, its edges
// the rows; flush() and stop() (`hurry`, `drain`) are left out, being the caller's, once per call, and so
// are start()'s moves (`begin`, `resume`), once per run.
// Plain ES2020: test/core/rules.test.ts runs it on Node, the XS probe `rules` on XS.
import type { EngineEvent, Rule, State } from '../../src/core/delivery/rules';

type Table = Readonly<Record<State, Readonly<Partial<Record<EngineEvent, Rule>>>>>;

interface Edge {
  from: State;
  event: EngineEvent;
  rule: Rule;
}

const ONCE: readonly EngineEvent[] = ['hurry', 'drain', 'begin', 'resume'];

/** A wait drawn from the backoff (or longer) that raises the attempt count: the next one is longer. */
export function growingWait(rule: Rule): boolean {
  return rule.attempt === 'raise' && (rule.wait === 'backoff' || rule.wait === 'retry-after' || rule.wait === 'auth');
}

function edgesOf(table: Table): Edge[] {
  const edges: Edge[] = [];
  for (const from of Object.keys(table) as State[]) {
    for (const event of Object.keys(table[from]) as EngineEvent[]) {
      if (ONCE.indexOf(event) < 0) edges.push({ from, event, rule: table[from][event] as Rule });
    }
  }
  return edges;
}

/** The edges of a shortest path from `start` to `goal` over `edges`, or null when there is none. */
function path(edges: readonly Edge[], start: State, goal: State): Edge[] | null {
  const via: Partial<Record<State, Edge | null>> = { [start]: null };
  const todo: State[] = [start];
  while (todo.length > 0) {
    const at = todo.shift() as State;
    if (at === goal) {
      const walked: Edge[] = [];
      for (let e = via[at]; e !== null && e !== undefined; e = via[e.from]) walked.unshift(e);
      return walked;
    }
    for (const e of edges) {
      if (e.from === at && !(e.rule.to in via)) {
        via[e.rule.to] = e;
        todo.push(e.rule.to);
      }
    }
  }
  return null;
}

function describe(cycle: readonly Edge[]): string {
  return cycle.map((e) => e.from + ' —' + e.event + '→ ').join('') + cycle[0].from;
}

/**
 * The impolite cycles of `table`, one per failing row that lies on one, each written out
 * (`sending —unknown after reset→ unknown —read not stored→ idle —send→ sending`); [] when the table is polite.
 */
export function impoliteCycles(table: Table): string[] {
  // Only the rows that neither wait longer each time nor store anything can close an impolite cycle.
  const plain = edgesOf(table).filter((e) => !growingWait(e.rule) && e.rule.attempt !== 'reset');
  const found: string[] = [];
  for (const e of plain) {
    if (!e.rule.fails) continue;
    const back = path(plain, e.rule.to, e.from);
    if (back !== null) found.push(describe([e, ...back]));
  }
  return found;
}
