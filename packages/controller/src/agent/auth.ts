// Who may ask the capture agent for a checkpoint. Anyone who reaches a node's port 8750 could
// otherwise checkpoint any pod there (by name and UID) or raise a capture's highest token so the
// controller's starts are refused. The caller sends a ServiceAccount token bound to the audience
// `claimkit-capture-agent` (the controller's is a projected token in its pod, read per request);
// the agent asks the API server who it is (TokenReview, with that audience) and accepts only the
// usernames it was told (`--allowed-callers`), as a kubelet authenticates its callers.
// /healthz stays open. Answers are cached for a minute per token (by its SHA-256).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';

export const CAPTURE_AGENT_AUDIENCE = 'claimkit-capture-agent';

export type AuthResult = { ok: true; user: string } | { ok: false; status: 401 | 403 | 503; error: string };

/** Judges a request's Authorization header. */
export type Authenticate = (authorization: string | undefined) => Promise<AuthResult>;

/** What a TokenReview said: the username when authenticated. */
export type ReviewToken = (
  token: string,
) => Promise<{ authenticated: true; user: string } | { authenticated: false; error: string }>;

export function bearerAuthenticator(o: {
  allowed: string[];
  review: ReviewToken;
  cacheMs?: number;
  now?: () => number;
}): Authenticate {
  const cache = new Map<string, { result: AuthResult; until: number }>();
  const now = o.now ?? Date.now;
  const allowed = new Set(o.allowed);
  return async (authorization) => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
    if (!m)
      return { ok: false, status: 401, error: 'a bearer token is required (Authorization: Bearer <token>)' };
    const key = createHash('sha256').update(m[1]!).digest('hex');
    const hit = cache.get(key);
    if (hit && hit.until > now()) return hit.result;
    let review: Awaited<ReturnType<ReviewToken>>;
    try {
      review = await o.review(m[1]!);
    } catch (e) {
      // Not cached: the API server may answer the next time.
      return { ok: false, status: 503, error: `cannot review the token: ${(e as Error).message}` };
    }
    const result: AuthResult = !review.authenticated
      ? {
          ok: false,
          status: 401,
          error: `the token is not valid for audience ${CAPTURE_AGENT_AUDIENCE}: ${review.error}`,
        }
      : allowed.has(review.user)
        ? { ok: true, user: review.user }
        : {
            ok: false,
            status: 403,
            error: `${review.user} may not ask this agent for checkpoints (allowed: ${[...allowed].join(', ')})`,
          };
    if (cache.size > 1000) cache.clear();
    cache.set(key, { result, until: now() + (o.cacheMs ?? 60_000) });
    return result;
  };
}

/**
 * A TokenReview against the API server the agent runs under (in-cluster: $KUBERNETES_SERVICE_HOST,
 * the pod's own ServiceAccount token and CA), for the agent's audience. RBAC: create tokenreviews.
 */
export function inClusterTokenReview(
  o: { host?: string; port?: string; tokenFile?: string; caFile?: string; timeoutMs?: number } = {},
): ReviewToken {
  const sa = '/var/run/secrets/kubernetes.io/serviceaccount';
  const host = o.host ?? process.env.KUBERNETES_SERVICE_HOST;
  const port = o.port ?? process.env.KUBERNETES_SERVICE_PORT ?? '443';
  return async (token) => {
    if (!host) throw new Error('no API server (KUBERNETES_SERVICE_HOST is not set)');
    const body = JSON.stringify({
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token, audiences: [CAPTURE_AGENT_AUDIENCE] },
    });
    const own = readFileSync(o.tokenFile ?? `${sa}/token`, 'utf8').trim();
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const rq = request(
        {
          host: host.includes(':') ? `[${host}]` : host,
          port,
          method: 'POST',
          path: '/apis/authentication.k8s.io/v1/tokenreviews',
          ca: readFileSync(o.caFile ?? `${sa}/ca.crt`),
          headers: {
            authorization: `Bearer ${own}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
          timeout: o.timeoutMs ?? 10_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
          );
          res.on('error', reject);
        },
      );
      rq.on('timeout', () => rq.destroy(new Error('no answer in time')));
      rq.on('error', reject);
      rq.end(body);
    });
    if (answer.status < 200 || answer.status >= 300)
      throw new Error(`TokenReview: HTTP ${answer.status}: ${answer.text.slice(0, 300)}`);
    const st = (
      JSON.parse(answer.text) as {
        status?: { authenticated?: boolean; user?: { username?: string }; error?: string };
      }
    ).status;
    return st?.authenticated && st.user?.username
      ? { authenticated: true, user: st.user.username }
      : { authenticated: false, error: st?.error ?? 'not authenticated' };
  };
}
