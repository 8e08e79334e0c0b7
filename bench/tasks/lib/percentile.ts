// The bench's one percentile rule, shared by the load client, the tail clusters and the flush
// probe: the value at index floor(p% × n) of the sorted sample (NaN for none).
export const pct = (sorted: readonly number[], p: number): number =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
