export * from './prometheus.ts';
