// The admission webhook as a Hono app over Web-standard Request/Response: it serves core's webhook
// rules (@claimkit/core/admission, one path each) as AdmissionReviews. No runtime imports:
// main-node.ts and main-deno.ts only read configuration and serve `app.fetch`.
import { DEFAULT_CONTROLLER_USERNAME } from '@claimkit/core';
import {
  type AdmissionRequest,
  type ControllerIdentities,
  type PodClaimIndex,
  type RuleContext,
  WEBHOOK_RULES,
  type WebhookRule,
} from '@claimkit/core/admission';
import { Hono } from 'hono';
import {
  type AdmissionResponse,
  badRequestResponse,
  parseReview,
  review,
  verdictResponse,
} from './admission.ts';
import { jsonLogger, type Logger } from './logger.ts';
import { createWebhookMetrics, type WebhookMetrics } from './metrics.ts';

// The same default as the admission policies' (core), so both layers accept the same controller.
export { DEFAULT_CONTROLLER_USERNAME };
export const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;

export interface WebhookDeps {
  /** Who may write claim spec podName/nodeName/sourcePod; default the controller's service account. */
  controller?: Partial<ControllerIdentities>;
  index: PodClaimIndex;
  metrics?: WebhookMetrics;
  logger?: Logger;
  /** Milliseconds, possibly fractional; used for latency only. */
  clock?: { now(): number };
  /** Larger bodies get a 400; the API server never sends more than a few MiB. */
  maxBodyBytes?: number;
}

type Route = WebhookRule;

/** The routes the app serves: core's webhook rules, one path each. */
export const ROUTES: readonly Route[] = WEBHOOK_RULES;

type Result = 'allowed' | 'denied' | 'bad_request' | 'error';

const defaultClock = { now: () => performance.timeOrigin + performance.now() };

export function createWebhookApp(deps: WebhookDeps): Hono {
  const metrics = deps.metrics ?? createWebhookMetrics();
  const log = deps.logger ?? jsonLogger();
  const clock = deps.clock ?? defaultClock;
  const maxBody = deps.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const ctx: RuleContext = {
    controller: {
      usernames: deps.controller?.usernames ?? [DEFAULT_CONTROLLER_USERNAME],
      groups: deps.controller?.groups ?? [],
    },
    index: deps.index,
  };
  const app = new Hono();

  app.get('/healthz', (c) => c.text('ok'));
  app.get('/readyz', (c) =>
    !deps.index.enabled || deps.index.synced() ? c.text('ok') : c.text('claim index not synced', 503),
  );
  app.get('/metrics', (c) =>
    c.body(metrics.registry.render(), 200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' }),
  );

  for (const route of ROUTES) {
    app.post(route.path, async (c) => {
      const start = clock.now();
      let result: Result = 'error';
      let code = 200;
      try {
        const out = await handle(route, c.req.raw);
        result = out.result;
        if (out.result === 'bad_request' && out.response === undefined) {
          log.warn('bad admission request', { path: route.path, error: out.message });
          code = 400;
          return c.json({ error: out.message }, 400);
        }
        const resp = out.response!;
        if (!resp.allowed) {
          for (const cause of resp.status?.details?.causes ?? []) {
            metrics.violations.inc({ path: route.path, field: cause.field });
          }
          log.info('admission denied', {
            path: route.path,
            uid: resp.uid,
            user: out.user,
            message: resp.status?.message,
          });
        }
        return c.json(review(resp), 200);
      } catch (err) {
        // Never reached by design (every rule is total); still never a 500 to the API server.
        log.error('admission handler failed', { path: route.path, error: String(err) });
        code = 400;
        return c.json({ error: 'internal error while reading the request' }, 400);
      } finally {
        const secs = (clock.now() - start) / 1000;
        metrics.requests.inc({ path: route.path, result });
        metrics.latency.observe(secs, { path: route.path, result });
        metrics.crRequests.inc({ webhook: route.path, code: String(code) });
        metrics.crLatency.observe(secs, { webhook: route.path });
      }
    });
  }

  async function handle(
    route: Route,
    req: Request,
  ): Promise<{ result: Result; response?: AdmissionResponse; message?: string; user?: string }> {
    const declared = Number(req.headers.get('content-length') ?? '0');
    if (declared > maxBody) return { result: 'bad_request', message: `body larger than ${maxBody} bytes` };
    let text: string;
    try {
      text = await req.text();
    } catch (err) {
      return { result: 'bad_request', message: `cannot read body: ${String(err)}` };
    }
    if (text.length > maxBody) return { result: 'bad_request', message: `body larger than ${maxBody} bytes` };
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (err) {
      return { result: 'bad_request', message: `body is not JSON: ${String(err).slice(0, 200)}` };
    }
    const parsed = parseReview(body);
    if (!parsed.ok) {
      if (parsed.badBody) return { result: 'bad_request', message: parsed.message };
      return { result: 'bad_request', response: badRequestResponse(parsed.uid, parsed.message) };
    }
    const { uid } = parsed;
    const input: AdmissionRequest = { ...parsed.input, kind: route.kind };
    const user = input.userInfo.username;
    const gvk = parsed.kind;
    if (gvk !== undefined && (gvk.kind !== route.kind || gvk.group !== route.group)) {
      return {
        result: 'bad_request',
        user,
        response: badRequestResponse(
          uid,
          `${route.path} judges ${route.kind} (group ${JSON.stringify(route.group)}), got ${gvk.kind || '?'} (group ${JSON.stringify(gvk.group)})`,
        ),
      };
    }
    const objKind = (input.object ?? input.oldObject) as { kind?: unknown; apiVersion?: unknown } | undefined;
    if (input.operation !== 'CONNECT' && objKind?.kind !== undefined && objKind.kind !== route.kind) {
      return {
        result: 'bad_request',
        user,
        response: badRequestResponse(
          uid,
          `${route.path} judges ${route.kind}, got an object of kind ${String(objKind.kind).slice(0, 60)}`,
        ),
      };
    }
    const verdict = route.rule(input, ctx);
    const name =
      input.name ?? ((input.object ?? input.oldObject) as { metadata?: { name?: unknown } })?.metadata?.name;
    const response = verdictResponse(uid, verdict, {
      kind: route.kind,
      group: route.group,
      ...(typeof name === 'string' ? { name } : {}),
    });
    return { result: verdict.allowed ? 'allowed' : 'denied', response, user };
  }

  return app;
}
