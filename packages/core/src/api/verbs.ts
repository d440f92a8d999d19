// The one vocabulary for API requests: the methods of the Client and Watcher ports. Fault rules,
// interceptors, the kube client's request hook and the `verb` label of claimkit_api_requests_total
// all name a request this way, so a status write is `updateStatus` / `patchStatus` everywhere (the
// API server's own vocabulary would say verb `update` plus subresource `status`).

export const REQUEST_VERBS = [
  'get',
  'list',
  'watch',
  'create',
  'update',
  'patch',
  'updateStatus',
  'patchStatus',
  'delete',
] as const;

export type RequestVerb = (typeof REQUEST_VERBS)[number];

/** The verbs of the Client port (everything but watch): calls that answer once. */
export type ClientVerb = Exclude<RequestVerb, 'watch'>;

export type WriteVerb = Exclude<ClientVerb, 'get' | 'list'>;

export const WRITE_VERBS: ReadonlySet<string> = new Set<WriteVerb>([
  'create',
  'update',
  'patch',
  'updateStatus',
  'patchStatus',
  'delete',
]);

export function isWriteVerb(v: string): v is WriteVerb {
  return WRITE_VERBS.has(v);
}

/** The subresource a verb writes (`status` for the status writes), as the API server names it. */
export function subresourceOf(verb: RequestVerb): 'status' | undefined {
  return verb === 'updateStatus' || verb === 'patchStatus' ? 'status' : undefined;
}
