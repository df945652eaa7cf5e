// Which operation of the interface a request is (docs/interface.md §4), from its method and path.
// Shared by the fault proxy (to match rules) and the scenarios' request log (to count requests).

export type Operation = 'read' | 'create-one' | 'create' | 'first' | 'last' | 'other';

export function operationOf(method: string, url: string): Operation {
  const path = url.split('?')[0];
  if (/\/resources\/[^/]+\/feeds\/first$/.test(path)) return 'first';
  if (/\/resources\/[^/]+\/feeds\/last$/.test(path)) return 'last';
  if (method === 'POST' && /\/resources\/feeds$/.test(path)) return 'create';
  if (method === 'POST' && /\/resource\/[^/]+\/feeds$/.test(path)) return 'create-one';
  if (method === 'GET' && /\/resources?\/[^/]+$/.test(path)) return 'read';
  return 'other';
}
