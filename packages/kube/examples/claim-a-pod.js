var __addDisposableResource = (this && this.__addDisposableResource) || function (env, value, async) {
    if (value !== null && value !== void 0) {
        if (typeof value !== "object" && typeof value !== "function") throw new TypeError("Object expected.");
        var dispose, inner;
        if (async) {
            if (!Symbol.asyncDispose) throw new TypeError("Symbol.asyncDispose is not defined.");
            dispose = value[Symbol.asyncDispose];
        }
        if (dispose === void 0) {
            if (!Symbol.dispose) throw new TypeError("Symbol.dispose is not defined.");
            dispose = value[Symbol.dispose];
            if (async) inner = dispose;
        }
        if (typeof dispose !== "function") throw new TypeError("Object not disposable.");
        if (inner) dispose = function() { try { inner.call(this); } catch (e) { return Promise.reject(e); } };
        env.stack.push({ value: value, dispose: dispose, async: async });
    }
    else if (async) {
        env.stack.push({ async: true });
    }
    return value;
};
var __disposeResources = (this && this.__disposeResources) || (function (SuppressedError) {
    return function (env) {
        function fail(e) {
            env.error = env.hasError ? new SuppressedError(e, env.error, "An error was suppressed during disposal.") : e;
            env.hasError = true;
        }
        var r, s = 0;
        function next() {
            while (r = env.stack.pop()) {
                try {
                    if (!r.async && s === 1) return s = 0, env.stack.push(r), Promise.resolve().then(next);
                    if (r.dispose) {
                        var result = r.dispose.call(r.value);
                        if (r.async) return s |= 2, Promise.resolve(result).then(next, function(e) { fail(e); return next(); });
                    }
                    else s |= 1;
                }
                catch (e) {
                    fail(e);
                }
            }
            if (s === 1) return env.hasError ? Promise.reject(env.error) : Promise.resolve();
            if (env.hasError) throw env.error;
        }
        return next();
    };
})(typeof SuppressedError === "function" ? SuppressedError : function (error, suppressed, message) {
    var e = new Error(message);
    return e.name = "SuppressedError", e.error = error, e.suppressed = suppressed, e;
});
import { ClaimWaitError, claimPod } from '@claimkit/kube';
// Claim a warm pod of pool `web`, learn where it is, use it, and release it when done.
export async function useAWarmPod(kube) {
    try {
        const env_1 = { stack: [], error: void 0, hasError: false };
        try {
            const claimed = __addDisposableResource(env_1, await claimPod(kube, { pool: 'web', namespace: 'apps', timeoutMs: 30_000 }), true);
            const [ip] = claimed.address.podIPs;
            const port = claimed.ports.find((p) => p.name === 'http')?.containerPort ?? 8080;
            claimed.onLost(() => console.warn(`pod ${claimed.pod.metadata.name} was lost`));
            return `http://${ip}:${port}/`; // ... talk to the pod; leaving the block releases the claim
        }
        catch (e_1) {
            env_1.error = e_1;
            env_1.hasError = true;
        }
        finally {
            const result_1 = __disposeResources(env_1);
            if (result_1)
                await result_1;
        }
    }
    catch (e) {
        // No pod in time: the claim's own reason (PoolAtMaxPods, NoReadyPod, ...); the claim is deleted.
        if (e instanceof ClaimWaitError)
            return `no pod: ${e.reason}`;
        throw e;
    }
}
//# sourceMappingURL=claim-a-pod.js.map