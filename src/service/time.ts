// The one timestamp form of the interface (§2.2): UTC, `YYYY-MM-DD HH:MM:SS` (contract, Values).

export function timestamp(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}
