// Test support for every package: fixture builders and the API-model conformance cases.
// Import as `@claimkit/core/testing`.
export * from '../model/conformance.ts';
export * from './fake-timers.ts';
export * from './fixtures.ts';
export * from './model-helpers.ts';
