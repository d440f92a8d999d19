export * from './prometheus.ts';
export * from './promql.ts';
