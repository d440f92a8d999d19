export * from './build-info.ts';
export * from './prometheus.ts';
export * from './promql.ts';
export * from './runtime.ts';
