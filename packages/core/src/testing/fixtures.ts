// Fixture builders for every test in the workspace, cert-manager style:
//   capture('c', withSelector({ app: 'db' }), withLease(60), heldBy(pod('a'), { token: 3 }))
//   pod('web-1', inPool('web'), idle(), ready(), onNode('n1'))
// A builder returns a complete object with DESIGN.md's defaults; each modifier changes one thing.
// Objects get a deterministic UID and creationTimestamp from the name, so pure decisions can be
// tested without an API model; the model replaces both on create. One file per kind in fixtures/;
// this file keeps the one import path every test (and `@claimkit/core/testing`) uses.
export * from './fixtures/capture.ts';
export * from './fixtures/full.ts';
export * from './fixtures/meta.ts';
export * from './fixtures/node.ts';
export * from './fixtures/pod.ts';
export * from './fixtures/podclaim.ts';
export * from './fixtures/podclaimset.ts';
export * from './fixtures/podpool.ts';
