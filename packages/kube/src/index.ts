export * from './client.ts';
export * from './errors.ts';
export * from './events.ts';
export * from './informer.ts';
export * from './kubeconfig.ts';
export * from './leader.ts';
