/**
 * One value of a Prometheus metric as prom-client holds it (a histogram's as its `_bucket`, `_sum`
 * and `_count`): what app/metrics.ts reads from the registry, a cluster worker sends its primary, and
 * the console sums by labels (console/samples.ts).
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
