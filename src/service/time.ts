// The one timestamp form of the interface: UTC, `YYYY-MM-DD HH:MM:SS` (docs/interface.md, Time).

export function timestamp(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}
