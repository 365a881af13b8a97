// The metrics capability's only door (Prometheus exposition at /metrics).
export { Metrics, type MetricsSources, type WebhookOutcome } from './registry.js';
export { startMetricsServer, type MetricsServer } from './server.js';
