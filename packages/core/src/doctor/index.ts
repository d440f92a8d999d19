export * from './checks.ts';
export * from './repair.ts';
export * from './run.ts';
