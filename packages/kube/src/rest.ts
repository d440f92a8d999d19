// core's Client port as REST calls: each verb's HTTP method, path and body, the answer decoded
// (with the type meta the server leaves out), and every failure as the typed ApiError the port
// promises (HTTP statuses through errors.ts; a merge patch on a replaced object is a Conflict).
import {
  type AnyObject,
  ApiError,
  type Client,
  type ClientVerb,
  type DeleteOptions,
  isApiError,
  KIND_INFO,
  type Kind,
  type KindMap,
  type KubeObject,
  type ListOptions,
  type MergePatch,
  type ObjectKey,
  type ObjectList,
  type PatchOptions,
  type RequestVerb,
  subresourceOf,
} from '@claimkit/core';
import { httpError } from './errors.ts';
import { withoutManagedFields } from './managed-fields.ts';
import {
  collectionPath,
  collectionText,
  fieldSelectorString,
  keyText,
  objectPath,
  selectorString,
  withTypeMeta,
} from './resources.ts';
import type { HttpRequest, KubeTransport } from './transport.ts';

/** Hears every request attempt: verb, kind, HTTP status (0 when no answer came) and duration. */
export type RequestObserver = (verb: RequestVerb, kind: Kind, code: number, ms: number) => void;

const MERGE_PATCH_CT = 'application/merge-patch+json';

const METHODS: Record<ClientVerb, HttpRequest['method']> = {
  get: 'GET',
  list: 'GET',
  create: 'POST',
  update: 'PUT',
  updateStatus: 'PUT',
  patch: 'PATCH',
  patchStatus: 'PATCH',
  delete: 'DELETE',
};

/** The object's path, with `/status` for a status write to a kind that has that subresource. */
function targetOf(verb: ClientVerb, kind: Kind, key: ObjectKey): { path: string; what: string } {
  const sub = subresourceOf(verb) && KIND_INFO[kind]?.hasStatusSubresource ? 'status' : undefined;
  return {
    path: objectPath(kind, key, sub),
    what: `${KIND_INFO[kind].plural} ${keyText(key)}${sub ? '/status' : ''}`,
  };
}

export class KubeRest implements Client {
  protected readonly transport: KubeTransport;
  protected readonly observe: RequestObserver;

  constructor(transport: KubeTransport, observe: RequestObserver) {
    this.transport = transport;
    this.observe = observe;
  }

  /** Sends the request; a 2xx answer is decoded, anything else thrown as ApiError. */
  private async call<T>(verb: ClientVerb, kind: Kind, req: Omit<HttpRequest, 'method'>): Promise<T> {
    const request: HttpRequest = { ...req, method: METHODS[verb] };
    const r = await this.transport.send(request, (code, ms) => this.observe(verb, kind, code, ms));
    const desc = this.transport.describe(request);
    if (r.status < 200 || r.status >= 300) throw httpError(r.status, r.text, desc, r.headers['retry-after']);
    try {
      return JSON.parse(this.transport.omitManagedFields ? withoutManagedFields(r.text) : r.text) as T;
    } catch {
      throw httpError(502, `unparseable response: ${r.text.slice(0, 200)}`, desc);
    }
  }

  // ---------------- Reader ----------------

  async get<K extends Kind>(kind: K, key: ObjectKey): Promise<KindMap[K]> {
    const o = await this.call<KindMap[K]>('get', kind, targetOf('get', kind, key));
    return withTypeMeta(kind, o);
  }

  async list<K extends Kind>(kind: K, opts: ListOptions = {}): Promise<ObjectList<KindMap[K]>> {
    const r = await this.call<{
      items?: KindMap[K][];
      metadata?: { resourceVersion?: string; continue?: string };
    }>('list', kind, {
      path: collectionPath(kind, opts.namespace),
      what: collectionText(kind, opts.namespace),
      query: {
        labelSelector: selectorString(opts.labelSelector),
        fieldSelector: fieldSelectorString(opts.fieldSelector),
        limit: opts.limit ? String(opts.limit) : undefined,
        continue: opts.continue || undefined,
      },
    });
    const out: ObjectList<KindMap[K]> = {
      items: (r.items ?? []).map((o) => withTypeMeta(kind, o)),
      resourceVersion: r.metadata?.resourceVersion ?? '',
    };
    if (r.metadata?.continue) out.continue = r.metadata.continue;
    return out;
  }

  // ---------------- Writer ----------------

  async create<T extends AnyObject>(obj: T): Promise<T> {
    const kind = obj.kind as Kind;
    const ns = obj.metadata.namespace ?? '';
    const name = obj.metadata.name || `${obj.metadata.generateName ?? ''}*`;
    const o = await this.call<T>('create', kind, {
      path: collectionPath(kind, ns),
      what: `${KIND_INFO[kind]?.plural ?? kind} ${keyText({ namespace: ns, name })}`,
      body: withTypeMeta(kind, { ...obj }),
    });
    return withTypeMeta(kind, o);
  }

  private async put<T extends AnyObject>(verb: 'update' | 'updateStatus', obj: T): Promise<T> {
    const kind = obj.kind as Kind;
    const key = { namespace: obj.metadata.namespace ?? '', name: obj.metadata.name };
    const o = await this.call<T>(verb, kind, {
      ...targetOf(verb, kind, key),
      body: withTypeMeta(kind, { ...obj }),
    });
    return withTypeMeta(kind, o);
  }

  update<T extends AnyObject>(obj: T): Promise<T> {
    return this.put('update', obj);
  }

  updateStatus<T extends AnyObject>(obj: T): Promise<T> {
    return this.put('updateStatus', obj);
  }

  private async mergePatch<K extends Kind>(
    verb: 'patch' | 'patchStatus',
    kind: K,
    key: ObjectKey,
    patch: MergePatch,
    opts: PatchOptions = {},
  ): Promise<KindMap[K]> {
    // The API server fences a merge patch on metadata.resourceVersion (409 Conflict when stale) and
    // rejects a metadata.uid that differs from the stored one.
    let body = patch;
    if (opts.resourceVersion !== undefined || opts.uid !== undefined) {
      const meta = { ...((patch.metadata as Record<string, unknown> | undefined) ?? {}) };
      if (opts.resourceVersion !== undefined) meta.resourceVersion = opts.resourceVersion;
      if (opts.uid !== undefined) meta.uid = opts.uid;
      body = { ...patch, metadata: meta };
    }
    try {
      const o = await this.call<KindMap[K]>(verb, kind, {
        ...targetOf(verb, kind, key),
        body,
        contentType: MERGE_PATCH_CT,
      });
      return withTypeMeta(kind, o);
    } catch (e) {
      // A merge patch with another metadata.uid is answered 422 "metadata.uid: field is immutable";
      // the port promises Conflict (as for update and delete preconditions): the object we meant is gone.
      if (
        opts.uid !== undefined &&
        isApiError(e, 'Invalid') &&
        e.causes.some((c) => c.field === 'metadata.uid')
      ) {
        throw new ApiError(
          'Conflict',
          `Precondition failed: UID in precondition: ${opts.uid} (${e.message})`,
          { code: 409, causes: e.causes },
        );
      }
      throw e;
    }
  }

  patch<K extends Kind>(
    kind: K,
    key: ObjectKey,
    patch: MergePatch,
    opts?: PatchOptions,
  ): Promise<KindMap[K]> {
    return this.mergePatch('patch', kind, key, patch, opts);
  }

  patchStatus<K extends Kind>(
    kind: K,
    key: ObjectKey,
    patch: MergePatch,
    opts?: PatchOptions,
  ): Promise<KindMap[K]> {
    return this.mergePatch('patchStatus', kind, key, patch, opts);
  }

  async delete<K extends Kind>(
    kind: K,
    key: ObjectKey,
    opts: DeleteOptions = {},
  ): Promise<KindMap[K] | undefined> {
    const body: Record<string, unknown> = { apiVersion: 'v1', kind: 'DeleteOptions' };
    if (opts.preconditions) body.preconditions = opts.preconditions;
    if (opts.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = opts.gracePeriodSeconds;
    const r = await this.call<KubeObject & { status?: unknown }>('delete', kind, {
      ...targetOf('delete', kind, key),
      body,
    });
    // The server answers a Status when the object is gone, else the object: kept (finalizers, a
    // graceful pod deletion) when it has a deletionTimestamp and something still holds it.
    if (!r || r.kind === 'Status') return undefined;
    const m = r.metadata;
    const kept =
      !!m?.deletionTimestamp && ((m.finalizers?.length ?? 0) > 0 || (m.deletionGracePeriodSeconds ?? 0) > 0);
    return kept ? withTypeMeta(kind, r as unknown as KindMap[K]) : undefined;
  }
}
