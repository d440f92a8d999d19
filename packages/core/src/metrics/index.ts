export * from './prometheus.ts';
export * from './runtime.ts';
