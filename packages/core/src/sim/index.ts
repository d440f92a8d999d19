// The deterministic simulator (`@claimkit/core/sim`): simulate, replay and shrink runs of several
// controller replicas against the in-memory model (see simulator.ts), and event routing and the
// event → queue layer broken on purpose for tests that prove such a bug is caught.
export * from './broken-loop.ts';
export * from './broken-routing.ts';
export * from './simulator.ts';
