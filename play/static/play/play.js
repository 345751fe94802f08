"use strict";
(() => {
  var __defProp = Object.defineProperty;
  var __defNormalProp = (obj, key, value) => key in obj ? __defProp(obj, key, { enumerable: true, configurable: true, writable: true, value }) : obj[key] = value;
  var __publicField = (obj, key, value) => __defNormalProp(obj, typeof key !== "symbol" ? key + "" : key, value);

  // ../typescript/node_modules/openapi-fetch/dist/index.mjs
  var PATH_PARAM_RE = /\{[^{}]+\}/g;
  var supportsRequestInitExt = () => {
    return typeof process === "object" && Number.parseInt(process?.versions?.node?.substring(0, 2)) >= 18 && process.versions.undici;
  };
  function randomID() {
    return Math.random().toString(36).slice(2, 11);
  }
  function createClient(clientOptions) {
    let {
      baseUrl = "",
      Request: CustomRequest = globalThis.Request,
      fetch: baseFetch = globalThis.fetch,
      querySerializer: globalQuerySerializer,
      bodySerializer: globalBodySerializer,
      pathSerializer: globalPathSerializer,
      headers: baseHeaders,
      requestInitExt = void 0,
      ...baseOptions
    } = { ...clientOptions };
    requestInitExt = supportsRequestInitExt() ? requestInitExt : void 0;
    baseUrl = removeTrailingSlash(baseUrl);
    const globalMiddlewares = [];
    async function coreFetch(schemaPath, fetchOptions) {
      const {
        baseUrl: localBaseUrl,
        fetch = baseFetch,
        Request = CustomRequest,
        headers,
        params = {},
        parseAs = "json",
        querySerializer: requestQuerySerializer,
        bodySerializer = globalBodySerializer ?? defaultBodySerializer,
        pathSerializer: requestPathSerializer,
        body,
        middleware: requestMiddlewares = [],
        ...init
      } = fetchOptions || {};
      let finalBaseUrl = baseUrl;
      if (localBaseUrl) {
        finalBaseUrl = removeTrailingSlash(localBaseUrl) ?? baseUrl;
      }
      let querySerializer = typeof globalQuerySerializer === "function" ? globalQuerySerializer : createQuerySerializer(globalQuerySerializer);
      if (requestQuerySerializer) {
        querySerializer = typeof requestQuerySerializer === "function" ? requestQuerySerializer : createQuerySerializer({
          ...typeof globalQuerySerializer === "object" ? globalQuerySerializer : {},
          ...requestQuerySerializer
        });
      }
      const pathSerializer = requestPathSerializer || globalPathSerializer || defaultPathSerializer;
      const serializedBody = body === void 0 ? void 0 : bodySerializer(
        body,
        // Note: we declare mergeHeaders() both here and below because it’s a bit of a chicken-or-egg situation:
        // bodySerializer() needs all headers so we aren’t dropping ones set by the user, however,
        // the result of this ALSO sets the lowest-priority content-type header. So we re-merge below,
        // setting the content-type at the very beginning to be overwritten.
        // Lastly, based on the way headers work, it’s not a simple “present-or-not” check becauase null intentionally un-sets headers.
        mergeHeaders(baseHeaders, headers, params.header)
      );
      const finalHeaders = mergeHeaders(
        // with no body, we should not to set Content-Type
        serializedBody === void 0 || // if serialized body is FormData; browser will correctly set Content-Type & boundary expression
        serializedBody instanceof FormData ? {} : {
          "Content-Type": "application/json"
        },
        baseHeaders,
        headers,
        params.header
      );
      const finalMiddlewares = [...globalMiddlewares, ...requestMiddlewares];
      const requestInit = {
        redirect: "follow",
        ...baseOptions,
        ...init,
        body: serializedBody,
        headers: finalHeaders
      };
      let id;
      let options;
      let request = new Request(
        createFinalURL(schemaPath, { baseUrl: finalBaseUrl, params, querySerializer, pathSerializer }),
        requestInit
      );
      let response;
      for (const key in init) {
        if (!(key in request)) {
          request[key] = init[key];
        }
      }
      if (finalMiddlewares.length) {
        id = randomID();
        options = Object.freeze({
          baseUrl: finalBaseUrl,
          fetch,
          parseAs,
          querySerializer,
          bodySerializer,
          pathSerializer
        });
        for (const m of finalMiddlewares) {
          if (m && typeof m === "object" && typeof m.onRequest === "function") {
            const result = await m.onRequest({
              request,
              schemaPath,
              params,
              options,
              id
            });
            if (result) {
              if (result instanceof Request) {
                request = result;
              } else if (result instanceof Response) {
                response = result;
                break;
              } else {
                throw new Error("onRequest: must return new Request() or Response() when modifying the request");
              }
            }
          }
        }
      }
      if (!response) {
        try {
          response = await fetch(request, requestInitExt);
        } catch (error2) {
          let errorAfterMiddleware = error2;
          if (finalMiddlewares.length) {
            for (let i = finalMiddlewares.length - 1; i >= 0; i--) {
              const m = finalMiddlewares[i];
              if (m && typeof m === "object" && typeof m.onError === "function") {
                const result = await m.onError({
                  request,
                  error: errorAfterMiddleware,
                  schemaPath,
                  params,
                  options,
                  id
                });
                if (result) {
                  if (result instanceof Response) {
                    errorAfterMiddleware = void 0;
                    response = result;
                    break;
                  }
                  if (result instanceof Error) {
                    errorAfterMiddleware = result;
                    continue;
                  }
                  throw new Error("onError: must return new Response() or instance of Error");
                }
              }
            }
          }
          if (errorAfterMiddleware) {
            throw errorAfterMiddleware;
          }
        }
        if (finalMiddlewares.length) {
          for (let i = finalMiddlewares.length - 1; i >= 0; i--) {
            const m = finalMiddlewares[i];
            if (m && typeof m === "object" && typeof m.onResponse === "function") {
              const result = await m.onResponse({
                request,
                response,
                schemaPath,
                params,
                options,
                id
              });
              if (result) {
                if (!(result instanceof Response)) {
                  throw new Error("onResponse: must return new Response() when modifying the response");
                }
                response = result;
              }
            }
          }
        }
      }
      const contentLength = response.headers.get("Content-Length");
      if (response.status === 204 || request.method === "HEAD" || contentLength === "0" && !response.headers.get("Transfer-Encoding")?.includes("chunked")) {
        return response.ok ? { data: void 0, response } : { error: void 0, response };
      }
      if (response.ok) {
        const getResponseData = async () => {
          if (parseAs === "stream") {
            return response.body;
          }
          if (parseAs === "json" && !contentLength) {
            const raw = await response.text();
            return raw ? JSON.parse(raw) : void 0;
          }
          return await response[parseAs]();
        };
        return { data: await getResponseData(), response };
      }
      let error = await response.text();
      try {
        error = JSON.parse(error);
      } catch {
      }
      return { error, response };
    }
    return {
      request(method, url, init) {
        return coreFetch(url, { ...init, method: method.toUpperCase() });
      },
      /** Call a GET endpoint */
      GET(url, init) {
        return coreFetch(url, { ...init, method: "GET" });
      },
      /** Call a PUT endpoint */
      PUT(url, init) {
        return coreFetch(url, { ...init, method: "PUT" });
      },
      /** Call a POST endpoint */
      POST(url, init) {
        return coreFetch(url, { ...init, method: "POST" });
      },
      /** Call a DELETE endpoint */
      DELETE(url, init) {
        return coreFetch(url, { ...init, method: "DELETE" });
      },
      /** Call a OPTIONS endpoint */
      OPTIONS(url, init) {
        return coreFetch(url, { ...init, method: "OPTIONS" });
      },
      /** Call a HEAD endpoint */
      HEAD(url, init) {
        return coreFetch(url, { ...init, method: "HEAD" });
      },
      /** Call a PATCH endpoint */
      PATCH(url, init) {
        return coreFetch(url, { ...init, method: "PATCH" });
      },
      /** Call a TRACE endpoint */
      TRACE(url, init) {
        return coreFetch(url, { ...init, method: "TRACE" });
      },
      /** Register middleware */
      use(...middleware) {
        for (const m of middleware) {
          if (!m) {
            continue;
          }
          if (typeof m !== "object" || !("onRequest" in m || "onResponse" in m || "onError" in m)) {
            throw new Error("Middleware must be an object with one of `onRequest()`, `onResponse() or `onError()`");
          }
          globalMiddlewares.push(m);
        }
      },
      /** Unregister middleware */
      eject(...middleware) {
        for (const m of middleware) {
          const i = globalMiddlewares.indexOf(m);
          if (i !== -1) {
            globalMiddlewares.splice(i, 1);
          }
        }
      }
    };
  }
  function serializePrimitiveParam(name, value, options) {
    if (value === void 0 || value === null) {
      return "";
    }
    if (typeof value === "object") {
      throw new Error(
        "Deeply-nested arrays/objects aren’t supported. Provide your own `querySerializer()` to handle these."
      );
    }
    return `${name}=${options?.allowReserved === true ? value : encodeURIComponent(value)}`;
  }
  function serializeObjectParam(name, value, options) {
    if (!value || typeof value !== "object") {
      return "";
    }
    const values = [];
    const joiner = {
      simple: ",",
      label: ".",
      matrix: ";"
    }[options.style] || "&";
    if (options.style !== "deepObject" && options.explode === false) {
      for (const k in value) {
        values.push(k, options.allowReserved === true ? value[k] : encodeURIComponent(value[k]));
      }
      const final2 = values.join(",");
      switch (options.style) {
        case "form": {
          return `${name}=${final2}`;
        }
        case "label": {
          return `.${final2}`;
        }
        case "matrix": {
          return `;${name}=${final2}`;
        }
        default: {
          return final2;
        }
      }
    }
    for (const k in value) {
      const finalName = options.style === "deepObject" ? `${name}[${k}]` : k;
      values.push(serializePrimitiveParam(finalName, value[k], options));
    }
    const final = values.join(joiner);
    return options.style === "label" || options.style === "matrix" ? `${joiner}${final}` : final;
  }
  function serializeArrayParam(name, value, options) {
    if (!Array.isArray(value)) {
      return "";
    }
    if (options.explode === false) {
      const joiner2 = { form: ",", spaceDelimited: "%20", pipeDelimited: "|" }[options.style] || ",";
      const final = (options.allowReserved === true ? value : value.map((v) => encodeURIComponent(v))).join(joiner2);
      switch (options.style) {
        case "simple": {
          return final;
        }
        case "label": {
          return `.${final}`;
        }
        case "matrix": {
          return `;${name}=${final}`;
        }
        // case "spaceDelimited":
        // case "pipeDelimited":
        default: {
          return `${name}=${final}`;
        }
      }
    }
    const joiner = { simple: ",", label: ".", matrix: ";" }[options.style] || "&";
    const values = [];
    for (const v of value) {
      if (options.style === "simple" || options.style === "label") {
        values.push(options.allowReserved === true ? v : encodeURIComponent(v));
      } else {
        values.push(serializePrimitiveParam(name, v, options));
      }
    }
    return options.style === "label" || options.style === "matrix" ? `${joiner}${values.join(joiner)}` : values.join(joiner);
  }
  function createQuerySerializer(options) {
    return function querySerializer(queryParams) {
      const search = [];
      if (queryParams && typeof queryParams === "object") {
        for (const name in queryParams) {
          const value = queryParams[name];
          if (value === void 0 || value === null) {
            continue;
          }
          if (Array.isArray(value)) {
            if (value.length === 0) {
              continue;
            }
            search.push(
              serializeArrayParam(name, value, {
                style: "form",
                explode: true,
                ...options?.array,
                allowReserved: options?.allowReserved || false
              })
            );
            continue;
          }
          if (typeof value === "object") {
            search.push(
              serializeObjectParam(name, value, {
                style: "deepObject",
                explode: true,
                ...options?.object,
                allowReserved: options?.allowReserved || false
              })
            );
            continue;
          }
          search.push(serializePrimitiveParam(name, value, options));
        }
      }
      return search.join("&");
    };
  }
  function defaultPathSerializer(pathname, pathParams) {
    let nextURL = pathname;
    for (const match of pathname.match(PATH_PARAM_RE) ?? []) {
      let name = match.substring(1, match.length - 1);
      let explode = false;
      let style = "simple";
      if (name.endsWith("*")) {
        explode = true;
        name = name.substring(0, name.length - 1);
      }
      if (name.startsWith(".")) {
        style = "label";
        name = name.substring(1);
      } else if (name.startsWith(";")) {
        style = "matrix";
        name = name.substring(1);
      }
      if (!pathParams || pathParams[name] === void 0 || pathParams[name] === null) {
        continue;
      }
      const value = pathParams[name];
      if (Array.isArray(value)) {
        nextURL = nextURL.replace(match, serializeArrayParam(name, value, { style, explode }));
        continue;
      }
      if (typeof value === "object") {
        nextURL = nextURL.replace(match, serializeObjectParam(name, value, { style, explode }));
        continue;
      }
      if (style === "matrix") {
        nextURL = nextURL.replace(match, `;${serializePrimitiveParam(name, value)}`);
        continue;
      }
      nextURL = nextURL.replace(match, style === "label" ? `.${encodeURIComponent(value)}` : encodeURIComponent(value));
    }
    return nextURL;
  }
  function defaultBodySerializer(body, headers) {
    if (body instanceof FormData) {
      return body;
    }
    if (headers) {
      const contentType = headers.get instanceof Function ? headers.get("Content-Type") ?? headers.get("content-type") : headers["Content-Type"] ?? headers["content-type"];
      if (contentType === "application/x-www-form-urlencoded") {
        return new URLSearchParams(body).toString();
      }
    }
    return JSON.stringify(body);
  }
  function createFinalURL(pathname, options) {
    let finalURL = `${options.baseUrl}${pathname}`;
    if (options.params?.path) {
      finalURL = options.pathSerializer(finalURL, options.params.path);
    }
    let search = options.querySerializer(options.params.query ?? {});
    if (search.startsWith("?")) {
      search = search.substring(1);
    }
    if (search) {
      finalURL += `?${search}`;
    }
    return finalURL;
  }
  function mergeHeaders(...allHeaders) {
    const finalHeaders = new Headers();
    for (const h2 of allHeaders) {
      if (!h2 || typeof h2 !== "object") {
        continue;
      }
      const iterator = h2 instanceof Headers ? h2.entries() : Object.entries(h2);
      for (const [k, v] of iterator) {
        if (v === null) {
          finalHeaders.delete(k);
        } else if (Array.isArray(v)) {
          for (const v2 of v) {
            finalHeaders.append(k, v2);
          }
        } else if (v !== void 0) {
          finalHeaders.set(k, v);
        }
      }
    }
    return finalHeaders;
  }
  function removeTrailingSlash(url) {
    if (url.endsWith("/")) {
      return url.substring(0, url.length - 1);
    }
    return url;
  }

  // ../typescript/src/errors.ts
  var ApiError = class extends Error {
    constructor(status, code, body) {
      super(`${status} ${code}: ${body?.detail ?? ""}`);
      __publicField(this, "status", status);
      __publicField(this, "code", code);
      __publicField(this, "body", body);
    }
  };
  var RetryLaterError = class extends ApiError {
    constructor(status, code, body, retryAfterSeconds) {
      super(status, code, body);
      __publicField(this, "retryAfterSeconds", retryAfterSeconds);
      __publicField(this, "retryAt");
      this.retryAt = new Date(Date.now() + retryAfterSeconds * 1e3);
      this.message += ` (retry after ${retryAfterSeconds} s, at ${this.retryAt.toISOString()})`;
    }
  };

  // ../typescript/src/retry.ts
  var DEFAULT_RETRY = { retries: 4, baseDelayMs: 250, maxDelayMs: 3e4 };
  var RETRY_STATUSES = /* @__PURE__ */ new Set([429, 503]);
  function parseRetryAfter(value, now = Date.now()) {
    if (!value) return void 0;
    if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1e3;
    const at = Date.parse(value);
    return Number.isNaN(at) ? void 0 : Math.max(0, at - now);
  }
  function backoff(policy, attempt, retryAfterMs) {
    if (retryAfterMs !== void 0) return Math.min(retryAfterMs, policy.maxDelayMs);
    const exp = policy.baseDelayMs * 2 ** attempt;
    return Math.min(policy.maxDelayMs, exp / 2 + Math.random() * (exp / 2));
  }
  var sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  function retryingFetch(policy = DEFAULT_RETRY, inner = (input) => globalThis.fetch(input)) {
    return async (input) => {
      const replayable = input.method === "GET" || input.headers.has("Idempotency-Key");
      for (let attempt = 0; ; attempt++) {
        const last = attempt >= policy.retries;
        let response;
        try {
          response = await inner(last ? input : input.clone());
        } catch (error) {
          if (last || !replayable) throw error;
          await sleep(backoff(policy, attempt));
          continue;
        }
        if (!RETRY_STATUSES.has(response.status)) return response;
        const wait = parseRetryAfter(response.headers.get("Retry-After"));
        if (wait !== void 0 && wait > policy.maxDelayMs) {
          const body = await response.json().catch(() => void 0);
          throw new RetryLaterError(response.status, body?.code ?? "http_error", body, wait / 1e3);
        }
        if (last) return response;
        await response.body?.cancel();
        await sleep(backoff(policy, attempt, wait));
      }
    };
  }

  // ../typescript/src/sse.ts
  async function* parseSse(body, onRetry) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    let data = [];
    let event = "";
    let id;
    try {
      for (; ; ) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        const cut = buffer.endsWith("\r") ? buffer.length - 1 : buffer.length;
        const lines = buffer.slice(0, cut).split(/\r\n|\r|\n/);
        buffer = (lines.pop() ?? "") + buffer.slice(cut);
        for (const line of lines) {
          if (line === "") {
            if (data.length) yield { id, event: event || "message", data: data.join("\n") };
            data = [];
            event = "";
            continue;
          }
          if (line.startsWith(":")) continue;
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          let val = colon < 0 ? "" : line.slice(colon + 1);
          if (val.startsWith(" ")) val = val.slice(1);
          if (field === "data") data.push(val);
          else if (field === "event") event = val;
          else if (field === "id" && !val.includes("\0")) id = val;
          else if (field === "retry" && /^\d+$/.test(val)) onRetry?.(Number(val));
        }
      }
    } finally {
      reader.releaseLock();
    }
  }
  async function* sseEvents(url, options = {}) {
    const doFetch = options.fetch ?? globalThis.fetch;
    let lastEventId = options.lastEventId;
    let delay = 1e3;
    for (let attempt = 0; attempt <= (options.reconnects ?? 5); attempt++) {
      const headers = { Accept: "text/event-stream", ...options.headers };
      if (lastEventId !== void 0) headers["Last-Event-ID"] = lastEventId;
      const response = await doFetch(url, { headers, signal: options.signal });
      if (!response.ok || !response.body) {
        throw new Error(`stream ${url}: HTTP ${response.status}`);
      }
      if (!(response.headers.get("Content-Type") ?? "").startsWith("text/event-stream")) {
        throw new Error(`stream ${url}: not an event stream`);
      }
      for await (const event of parseSse(response.body, (ms) => delay = ms)) {
        if (event.id !== void 0) lastEventId = event.id;
        yield event;
      }
      if (options.signal?.aborted) return;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  // ../typescript/src/index.ts
  function unwrap(result) {
    if (result.error !== void 0 || result.data === void 0) {
      const body = result.error;
      throw new ApiError(result.response.status, body?.code ?? "http_error", body);
    }
    return result.data;
  }
  function idempotencyKey() {
    return globalThis.crypto.randomUUID();
  }
  var ChanClient = class {
    constructor(options) {
      __publicField(this, "api");
      __publicField(this, "baseUrl");
      __publicField(this, "token");
      __publicField(this, "wait");
      /** The seed sent with the last ready at each table (the fair deal, docs/audit.md). */
      __publicField(this, "clientSeeds", /* @__PURE__ */ new Map());
      this.baseUrl = options.baseUrl.replace(/\/$/, "");
      this.token = options.token;
      this.wait = options.wait ?? 25;
      this.api = createClient({
        baseUrl: this.baseUrl,
        fetch: retryingFetch(options.retry ?? DEFAULT_RETRY, options.fetch)
      });
      this.api.use({
        onRequest: ({ request }) => {
          if (this.token) request.headers.set("Authorization", `Bearer ${this.token}`);
          return request;
        }
      });
    }
    async register(username, password) {
      const body = unwrap(await this.api.POST("/api/v1/auth/register", { body: { username, password } }));
      this.token = body.token;
      return body.token;
    }
    async login(username, password) {
      const body = unwrap(await this.api.POST("/api/v1/auth/token", { body: { username, password } }));
      this.token = body.token;
      return body.token;
    }
    async createTable(body) {
      return unwrap(await this.api.POST("/api/v1/tables", { body }));
    }
    async join(tableId, body = {}) {
      return unwrap(
        await this.api.POST("/api/v1/tables/{table_id}/join", {
          params: { path: { table_id: tableId } },
          body
        })
      );
    }
    /** Say ready (or not). Ready, it sends this seat's own seed for the fair deal: `clientSeed`,
     * or by default 32 random bytes in hex; `""` gives none. */
    async ready(tableId, ready = true, clientSeed) {
      const seed = ready ? clientSeed ?? randomHex(32) : void 0;
      const result = unwrap(
        await this.api.POST("/api/v1/tables/{table_id}/ready", {
          params: { path: { table_id: tableId } },
          body: seed === void 0 ? { ready } : { ready, client_seed: seed }
        })
      );
      if (seed !== void 0) this.clientSeeds.set(tableId, seed);
      return result;
    }
    async table(tableId) {
      return unwrap(
        await this.api.GET("/api/v1/tables/{table_id}", { params: { path: { table_id: tableId } } })
      );
    }
    async hand(handId) {
      return unwrap(
        await this.api.GET("/api/v1/hands/{hand_id}", { params: { path: { hand_id: handId } } })
      );
    }
    /**
     * The view once the hand's seq is above `afterSeq`: a long poll (`?wait=&after_seq=`) with
     * `If-None-Match`; a 304 (nothing moved within `wait`) polls again, up to `rounds` times.
     */
    async nextView(handId, afterSeq, rounds = 40) {
      let etag;
      for (let round = 0; round < rounds; round++) {
        const result = await this.api.GET("/api/v1/hands/{hand_id}", {
          params: {
            path: { hand_id: handId },
            query: { after_seq: afterSeq, wait: this.wait },
            header: etag ? { "If-None-Match": etag } : {}
          }
        });
        if (result.response.status === 304) continue;
        const view = unwrap(result);
        etag = result.response.headers.get("ETag") ?? void 0;
        if (view.seq > afterSeq || view.status === "ended") return view;
      }
      throw new Error(`hand ${handId}: nothing moved after seq ${afterSeq}`);
    }
    /**
     * Make a move. `expectedSeq` refuses it (409 stale_seq) if the hand moved meanwhile; the
     * Idempotency-Key makes a retry after a lost answer safe (the first answer comes back).
     */
    async move(handId, move, options = {}) {
      const body = options.expectedSeq === void 0 ? move : { ...move, expected_seq: options.expectedSeq };
      return unwrap(
        await this.api.POST("/api/v1/hands/{hand_id}/moves", {
          params: {
            path: { hand_id: handId },
            header: { "Idempotency-Key": options.key ?? idempotencyKey() }
          },
          body
        })
      );
    }
    async events(handId, afterSeq) {
      return unwrap(
        await this.api.GET("/api/v1/hands/{hand_id}/events", {
          params: { path: { hand_id: handId }, query: { after_seq: afterSeq } }
        })
      );
    }
    /**
     * The hand's events as they happen (`Accept: text/event-stream`; `Last-Event-ID` resumes),
     * each `data` parsed as a HandEvent. Needs a server with the streams; on one without them
     * the first request fails (not an event stream).
     */
    async *eventStream(handId, lastEventId) {
      const headers = this.token ? { Authorization: `Bearer ${this.token}` } : {};
      const url = `${this.baseUrl}/api/v1/hands/${handId}/events`;
      for await (const event of sseEvents(url, { headers, lastEventId })) {
        let data;
        try {
          data = JSON.parse(event.data);
        } catch {
          continue;
        }
        if (data && typeof data === "object" && "seq" in data) yield data;
      }
    }
  };
  function randomHex(bytes) {
    const raw = globalThis.crypto.getRandomValues(new Uint8Array(bytes));
    return Array.from(raw, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  // src/cards.ts
  var SVG = "http://www.w3.org/2000/svg";
  var RED_CODES = /* @__PURE__ */ new Set(["CC", "8V", "8S", "9V", "9S"]);
  var SUITS = ["V", "N", "S"];
  var NUMERAL_STROKES = {
    2: "M5 6h10 M2 15h16",
    3: "M4 4h12 M5 10h10 M2 16h16",
    4: "M3 4h14v13H3z M8 4v5c0 3-1 5-3 6 M12 4v8c0 1 1 2 2 2h3",
    5: "M3 4h14 M9 4l-2 12 M5 9h9v8 M2 17h16",
    6: "M10 2v3 M3 6h14 M8 10l-4 7 M12 10l4 7",
    7: "M2 10l16-3 M8 2v12c0 3 2 4 9 4",
    8: "M8 4c0 6-2 10-6 14 M12 4c1 6 3 10 6 14",
    9: "M9 2c0 8-1 13-6 17 M3 7h8v9c0 2 2 3 7 2"
  };
  function cardName(code, t2) {
    if (code === "CC") return t2.card_names.CC;
    const rank = Number(code[0]);
    const suit = code[1];
    return `${t2.ranks[rank]} ${t2.card_names[suit]}`;
  }
  function el(tag, attrs) {
    const node = document.createElementNS(SVG, tag);
    for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
    return node;
  }
  function cardSvg(code, t2) {
    const name = cardName(code, t2);
    const red = RED_CODES.has(code);
    const ink = red ? "#b3001b" : "#1a1a1a";
    const svg = el("svg", { viewBox: "0 0 40 64", role: "img", "aria-label": name, class: "card" });
    svg.dataset.card = code;
    if (red) svg.classList.add("red");
    const title = el("title", {});
    title.textContent = name;
    svg.append(title);
    svg.append(el("rect", { x: 1, y: 1, width: 38, height: 62, rx: 4, fill: "#fbf5e6", stroke: "#6b5b3e", "stroke-width": 1.2 }));
    svg.append(el("rect", { x: 4, y: 4, width: 32, height: 56, rx: 2, fill: "none", stroke: ink, "stroke-width": 0.6 }));
    if (code === "CC") {
      svg.append(el("circle", { cx: 20, cy: 18, r: 6, fill: "none", stroke: ink, "stroke-width": 1.8 }));
      svg.append(el("path", { d: "M10 40c2-8 6-12 10-12s8 4 10 12z", fill: ink }));
      const label = el("text", { x: 20, y: 53, "text-anchor": "middle", "font-size": 8, "font-weight": 700, fill: ink, "font-family": "sans-serif" });
      label.textContent = "CHI";
      svg.append(label);
      return svg;
    }
    const rank = Number(code[0]);
    const suit = code[1];
    const numeral = el("path", {
      d: NUMERAL_STROKES[rank] ?? "",
      transform: "translate(8 7) scale(1.2)",
      fill: "none",
      stroke: ink,
      "stroke-width": 2.2,
      "stroke-linecap": "round",
      "stroke-linejoin": "round"
    });
    svg.append(numeral);
    const suitLabel = el("text", { x: 20, y: 46, "text-anchor": "middle", "font-size": 10, "font-weight": 700, fill: ink, "font-family": "serif" });
    suitLabel.textContent = t2.card_names[suit];
    svg.append(suitLabel);
    const short = el("text", { x: 20, y: 57, "text-anchor": "middle", "font-size": 7, fill: ink, "font-family": "sans-serif" });
    short.textContent = code;
    svg.append(short);
    return svg;
  }
  function groupHand(cards) {
    const left = [...cards].sort(compareCards);
    const take = (code) => left.splice(left.indexOf(code), 1)[0];
    const chan = [];
    for (let i = 0; i + 1 < left.length; ) {
      if (left[i] === left[i + 1]) chan.push(left.splice(i, 2));
      else i++;
    }
    const ba_dau = [];
    const ca = [];
    for (let rank = 2; rank <= 9; rank++) {
      const present = SUITS.map((s) => `${rank}${s}`).filter((c) => left.includes(c));
      if (present.length === 3) ba_dau.push(present.map(take));
      else if (present.length === 2) ca.push(present.map(take));
    }
    return { chan, ca, ba_dau, que: left };
  }
  function compareCards(a, b) {
    const key = (c) => c === "CC" ? 99 : Number(c[0]) * 3 + SUITS.indexOf(c[1]);
    return key(a) - key(b);
  }

  // src/dom.ts
  function h(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (value === null || value === void 0 || value === false) continue;
      if (typeof value === "function") node.addEventListener(key.replace(/^on/, ""), value);
      else if (value === true) node.setAttribute(key, "");
      else node.setAttribute(key, String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === void 0 || child === false) continue;
      node.append(typeof child === "number" ? String(child) : child);
    }
    return node;
  }

  // src/i18n.ts
  var vi = {
    title: "Chắn — chơi",
    lang_switch: "English",
    signup: "Đăng ký",
    signin: "Đăng nhập",
    signout: "Đăng xuất",
    username: "Tên đăng nhập",
    password: "Mật khẩu",
    have_account: "Đã có tài khoản? Đăng nhập",
    no_account: "Chưa có tài khoản? Đăng ký",
    lobby: "Sảnh",
    balance: "Số dư",
    held: "Đang giữ",
    available: "Dùng được",
    quan: "Quan",
    practice: "Bàn tập với 3 máy",
    practice_help: "Ba máy của máy chủ ngồi các ghế kia; không mất Quan.",
    bot_delay: "Máy chờ trước mỗi nước",
    my_table: "Về bàn của tôi",
    new_table: "Mở bàn",
    room: "Phòng",
    stake: "Tiền cược (Quan một điểm)",
    max_seats: "Số ghế",
    open_tables: "Bàn đang mở",
    no_open_tables: "Chưa có bàn nào đang chờ người.",
    join: "Ngồi vào",
    watch: "Xem",
    spectating: "Bạn đang xem bàn này (không ngồi).",
    ready: "Sẵn sàng",
    ready_yes: "sẵn sàng",
    ready_no: "chưa sẵn sàng",
    table: "Bàn",
    hand_no: "Ván",
    seat: "Ghế",
    you: "bạn",
    bot: "máy",
    dealer: "cái",
    cards_left: "lá trên tay",
    stock: "Nọc",
    door: "Cửa",
    mat: "Chiếu",
    my_hand: "Bài của tôi",
    offer: "Quân đang mời",
    offered_to: "mời ghế",
    from_stock: "bốc từ nọc",
    from_discard: "đánh ra",
    turn: "Lượt",
    my_turn: "Đến lượt bạn",
    waiting: "Chờ",
    seconds: "giây",
    moves: "Nước đi",
    no_moves: "Chưa đến lượt bạn.",
    reality_check: (minutes, net) => `Nhắc giờ chơi: bạn đã chơi ${minutes} phút, kết quả ròng ${net > 0 ? "+" : ""}${net} Quan.`,
    discard_hint: "Chọn một lá trong bài để đánh (lá viền vàng là lá gợi ý).",
    keys_help: "Phím: B bốc, D dưới, U ù, C chíu, A ăn (quân đầu), Q đánh quân gợi ý; hoặc chọn một lá để đánh.",
    groups: { chan: "Chắn", ca: "Cạ", ba_dau: "Ba đầu", que: "Què", hand: "Trên tay" },
    move: {
      discard: "Đánh",
      eat: "Ăn",
      draw: "Bốc",
      pass: "Dưới",
      chiu: "Chíu",
      tra_cua: "Trả cửa",
      u: "Ù",
      declare: "Xướng",
      set_prefs: "Tùy chọn"
    },
    with: "với",
    bao: "báo",
    faults: "Lỗi",
    declare_title: "Xướng cước",
    declare_help: "Chọn cước của ván ù; máy chủ sẽ xét đúng, thiếu hay sai.",
    declare_send: "Xướng",
    declare_auto: "Để máy chủ xướng",
    result: "Kết quả",
    results: { u: "Ù", u_lao: "Ù láo", hoa: "Hòa (hết nọc)" },
    winner: "Người ù",
    win_card: "Quân ù",
    declared: "Đã xướng",
    true_cuoc: "Cước thật",
    verdict: "Xét",
    verdicts: { dung: "Đúng", thieu: "Thiếu", sai: "Sai" },
    points: "Điểm",
    score: "Điểm (gốc + gà = tổng)",
    transfers: "Chuyển điểm",
    quan_net: "Quan (ròng)",
    practice_quan: "Bàn tập: không có Quan nào chuyển.",
    quan_pending: "Đang ghi sổ Quan…",
    next_hand: "Ván tiếp",
    waiting_deal: "Đang chờ chia bài…",
    back_lobby: "Về sảnh",
    connection_sse: "Luồng sự kiện (SSE)",
    connection_poll: "Hỏi dài (long poll)",
    error: "Lỗi",
    loading: "Đang tải…",
    card_names: { V: "Vạn", N: "Văn", S: "Sách", CC: "Chi Chi" },
    ranks: ["", "", "Nhị", "Tam", "Tứ", "Ngũ", "Lục", "Thất", "Bát", "Cửu"],
    // the faults' names (games/rules/faults.py): Vietnamese terms, in both languages
    fault_names: {
      treo_tranh: "Treo tranh",
      an_thuong_khi_chiu: "Ăn thường khi chíu",
      bo_u: "Bỏ ù",
      an_chon_ca: "Ăn chọn cạ",
      co_chan_cau_ca: "Có chắn cấu cạ",
      an_ca_chuyen_cho: "Ăn cạ chuyển chờ",
      cho_chi_rong: "Chờ chi rộng",
      bo_chan_an_chan: "Bỏ chắn ăn chắn",
      bo_chan_an_ca: "Bỏ chắn ăn cạ",
      bo_ca_an_ca: "Bỏ cạ ăn cạ",
      bo_roi_danh: "Bỏ rồi đánh",
      danh_ca_an_ca: "Đánh cạ ăn cạ",
      xe_ca_an_ca: "Xé cạ ăn cạ",
      danh_roi_an: "Đánh rồi ăn",
      danh_doi_chan: "Đánh đôi chắn",
      an_roi_danh: "Ăn rồi đánh",
      an_ca_an_chan_cung_hang: "Ăn cạ ăn chắn cùng hàng",
      an_ca_danh_ca: "Ăn cạ đánh cạ",
      an_ca_danh_cung_hang: "Ăn cạ đánh cùng hàng",
      u_lao: "Ù láo",
      xuong_sai: "Xướng sai"
    },
    my_faults: "Lỗi của tôi",
    cuoc: {
      xuong: "Xuông",
      thong: "Thông",
      chi: "Chì",
      thien_u: "Thiên ù",
      dia_u: "Địa ù",
      chiu_u: "Chíu ù",
      u_bon: "Ù bòn",
      bach_thu: "Bạch thủ",
      bach_thu_chi: "Bạch thủ chi",
      thap_thanh: "Thập thành",
      bach_dinh: "Bạch định",
      tam_do: "Tám đỏ",
      kinh_tu_chi: "Kính tứ chi",
      tom: "Tôm",
      leo: "Lèo",
      thien_khai: "Thiên khai",
      chiu: "Có chíu",
      an_bon: "Có ăn bòn",
      hoa_roi_cua_phat: "Hoa rơi cửa phật",
      ca_loi_san_dinh: "Cá lội sân đình",
      ca_nhay_dau_thuyen: "Cá nhảy đầu thuyền",
      chua_do_nat_hoa: "Chùa đổ nát hoa",
      nha_lau_xe_hoi: "Nhà lầu xe hơi hoa rơi cửa phật",
      ngu_ong_bat_ca: "Ngư ông bắt cá",
      pha_thien: "Phá thiên"
    }
  };
  var en = {
    title: "Chắn — play",
    lang_switch: "Tiếng Việt",
    signup: "Sign up",
    signin: "Sign in",
    signout: "Sign out",
    username: "Username",
    password: "Password",
    have_account: "Have an account? Sign in",
    no_account: "No account? Sign up",
    lobby: "Lobby",
    balance: "Balance",
    held: "Held",
    available: "Available",
    quan: "Quan",
    practice: "Practice table with 3 bots",
    practice_help: "Three server bots take the other seats; no Quan at stake.",
    bot_delay: "Bots wait before each move",
    my_table: "Back to my table",
    new_table: "Open a table",
    room: "Room",
    stake: "Stake (Quan a point)",
    max_seats: "Seats",
    open_tables: "Open tables",
    no_open_tables: "No table is waiting for players.",
    join: "Sit down",
    watch: "Watch",
    spectating: "You are watching this table (not seated).",
    ready: "Ready",
    ready_yes: "ready",
    ready_no: "not ready",
    table: "Table",
    hand_no: "Hand",
    seat: "Seat",
    you: "you",
    bot: "bot",
    dealer: "dealer",
    cards_left: "cards in hand",
    stock: "Stock",
    door: "Door",
    mat: "Mat",
    my_hand: "My cards",
    offer: "Card on offer",
    offered_to: "offered to seat",
    from_stock: "drawn from the stock",
    from_discard: "discarded",
    turn: "Turn",
    my_turn: "Your turn",
    waiting: "Waiting for",
    seconds: "s",
    moves: "Moves",
    no_moves: "Not your turn.",
    reality_check: (minutes, net) => `Reminder: you have played ${minutes} minutes, net ${net > 0 ? "+" : ""}${net} Quan.`,
    discard_hint: "Pick a card in your hand to discard (the one framed in gold is suggested).",
    keys_help: "Keys: B draw, D pass, U ù, C chíu, A eat (first), Q discard the suggested card; or pick a card to discard.",
    groups: { chan: "Chắn (pairs)", ca: "Cạ", ba_dau: "Ba đầu", que: "Què (odd cards)", hand: "In hand" },
    move: {
      discard: "Discard",
      eat: "Eat",
      draw: "Draw",
      pass: "Pass",
      chiu: "Chíu",
      tra_cua: "Trả cửa",
      u: "Ù",
      declare: "Declare",
      set_prefs: "Preferences"
    },
    with: "with",
    bao: "báo",
    faults: "Faults",
    declare_title: "Declare the cước (xướng)",
    declare_help: "Pick the cước of your win; the server judges it right, short or wrong.",
    declare_send: "Declare",
    declare_auto: "Let the server declare",
    result: "Result",
    results: { u: "Ù (a win)", u_lao: "Ù láo", hoa: "Hòa (the stock ran out)" },
    winner: "Winner",
    win_card: "Winning card",
    declared: "Declared",
    true_cuoc: "True cước",
    verdict: "Verdict",
    verdicts: { dung: "Đúng (right)", thieu: "Thiếu (short)", sai: "Sai (wrong)" },
    points: "Points",
    score: "Points (base + gà = total)",
    transfers: "Transfers",
    quan_net: "Quan (net)",
    practice_quan: "Practice table: no Quan moves.",
    quan_pending: "Booking the Quan…",
    next_hand: "Next hand",
    waiting_deal: "Waiting for the deal…",
    back_lobby: "Back to the lobby",
    connection_sse: "Event stream (SSE)",
    connection_poll: "Long poll",
    error: "Error",
    loading: "Loading…",
    card_names: vi.card_names,
    ranks: vi.ranks,
    fault_names: vi.fault_names,
    my_faults: "My faults",
    cuoc: vi.cuoc
  };
  var CATALOGUES = { vi, en };

  // src/main.ts
  var TOKEN_KEY = "chan.play.token";
  var LANG_KEY = "chan.play.lang";
  var TABLE_KEY = "chan.play.table";
  var lang = localStorage.getItem(LANG_KEY) === "en" ? "en" : "vi";
  var t = CATALOGUES[lang];
  var client = new ChanClient({
    baseUrl: location.origin,
    token: localStorage.getItem(TOKEN_KEY) ?? void 0
  });
  var root = document.getElementById("app");
  var stop = new AbortController();
  var rerender = () => {
  };
  function frame(title, ...body) {
    document.title = `${title} · ${t.title}`;
    document.documentElement.lang = lang;
    const nav = h(
      "nav",
      { "aria-label": "menu" },
      h("a", { href: "#/" }, t.lobby),
      h(
        "button",
        {
          type: "button",
          id: "lang",
          lang: lang === "vi" ? "en" : "vi",
          onclick: () => {
            lang = lang === "vi" ? "en" : "vi";
            t = CATALOGUES[lang];
            localStorage.setItem(LANG_KEY, lang);
            rerender();
          }
        },
        t.lang_switch
      ),
      client.token ? h("button", { type: "button", id: "signout", onclick: signOut }, t.signout) : null
    );
    root.replaceChildren(
      h("header", {}, h("p", { class: "brand" }, "Chắn"), nav),
      h("main", { id: "main" }, h("h1", {}, title), ...body),
      h("p", { id: "error", role: "alert" })
    );
  }
  function showError(error) {
    const box = document.getElementById("error");
    const detail = error instanceof ApiError ? error.body?.detail ?? error.message : String(error);
    if (box) box.textContent = `${t.error}: ${detail}`;
  }
  function clearError() {
    const box = document.getElementById("error");
    if (box) box.textContent = "";
  }
  async function signOut() {
    try {
      await client.api.POST("/api/v1/auth/logout", {});
    } catch {
    }
    client.token = void 0;
    localStorage.removeItem(TOKEN_KEY);
    localStorage.removeItem(TABLE_KEY);
    location.hash = "#/";
    route();
  }
  function authPage(mode) {
    rerender = () => authPage(mode);
    const username = h("input", { id: "username", name: "username", autocomplete: "username", required: true, maxlength: 150 });
    const password = h("input", {
      id: "password",
      name: "password",
      type: "password",
      autocomplete: mode === "signup" ? "new-password" : "current-password",
      required: true
    });
    const form = h(
      "form",
      { id: "auth", class: "card-panel" },
      h("label", { for: "username" }, t.username),
      username,
      h("label", { for: "password" }, t.password),
      password,
      h("button", { type: "submit", id: "auth-submit" }, mode === "signup" ? t.signup : t.signin)
    );
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      clearError();
      try {
        const token = mode === "signup" ? await client.register(username.value, password.value) : await client.login(username.value, password.value);
        localStorage.setItem(TOKEN_KEY, token);
        route();
      } catch (error) {
        showError(error);
      }
    });
    const other = h(
      "button",
      { type: "button", class: "link", id: "auth-other", onclick: () => authPage(mode === "signup" ? "signin" : "signup") },
      mode === "signup" ? t.have_account : t.no_account
    );
    frame(mode === "signup" ? t.signup : t.signin, form, other);
    username.focus();
  }
  async function lobbyPage() {
    rerender = () => void lobbyPage();
    frame(t.lobby, h("p", {}, t.loading));
    let me;
    try {
      const result = await client.api.GET("/api/v1/me", {});
      if (result.response.status === 401) return forgetToken();
      me = result.data;
    } catch (error) {
      return showError(error);
    }
    if (!me) return;
    const fmt = (n) => n.toLocaleString(lang === "vi" ? "vi-VN" : "en-US");
    const wallet = h(
      "dl",
      { id: "wallet", class: "wallet" },
      h("dt", {}, t.balance),
      h("dd", { id: "balance" }, `${fmt(me.balance)} ${t.quan}`),
      h("dt", {}, t.held),
      h("dd", {}, `${fmt(me.held)} ${t.quan}`),
      h("dt", {}, t.available),
      h("dd", {}, `${fmt(me.available)} ${t.quan}`)
    );
    const delay = h(
      "select",
      { id: "bot-delay", name: "bot_delay" },
      ...[1, 0, 2, 3].map((s) => h("option", { value: s }, `${s} ${t.seconds}`))
    );
    const practice = h(
      "section",
      { class: "card-panel", "aria-labelledby": "practice-title" },
      h("h2", { id: "practice-title" }, t.practice),
      h("p", {}, t.practice_help),
      h("label", { for: "bot-delay" }, t.bot_delay),
      delay,
      h(
        "button",
        {
          type: "button",
          id: "practice",
          onclick: async () => {
            clearError();
            try {
              const table = await client.createTable({
                name: t.practice,
                practice: true,
                bots: 3,
                bot_delay: Number(delay.value)
              });
              await client.ready(table.id);
              localStorage.setItem(TABLE_KEY, String(table.id));
              location.hash = `#/table/${table.id}`;
            } catch (error) {
              showError(error);
            }
          }
        },
        t.practice
      )
    );
    const mine = localStorage.getItem(TABLE_KEY);
    const [rooms, open] = await Promise.all([
      client.api.GET("/api/v1/rooms", {}).then((r) => r.data ?? []),
      client.api.GET("/api/v1/tables", { params: { query: { limit: 20 } } }).then((r) => r.data ?? [])
    ]).catch((error) => {
      showError(error);
      return [[], []];
    });
    const roomSelect = h(
      "select",
      { id: "room", name: "room" },
      ...rooms.map(
        (r) => h(
          "option",
          { value: r.slug },
          `${r.name[lang] ?? r.slug}${r.requirements.balance ? ` (≥ ${fmt(r.requirements.balance)} ${t.quan})` : ""}`
        )
      )
    );
    const stake = h("input", { id: "stake", name: "stake", type: "number", min: 1, value: 1, inputmode: "numeric" });
    const seatsSelect = h("select", { id: "max-seats", name: "max_seats" }, ...[4, 3, 2].map((n) => h("option", { value: n }, n)));
    const sitDown = async (make) => {
      clearError();
      try {
        const table = await make();
        await client.ready(table.id);
        localStorage.setItem(TABLE_KEY, String(table.id));
        location.hash = `#/table/${table.id}`;
      } catch (error) {
        showError(error);
      }
    };
    const createForm = h(
      "form",
      { id: "create-table", class: "card-panel", "aria-labelledby": "create-title" },
      h("h2", { id: "create-title" }, t.new_table),
      h("label", { for: "room" }, t.room),
      roomSelect,
      h("label", { for: "stake" }, t.stake),
      stake,
      h("label", { for: "max-seats" }, t.max_seats),
      seatsSelect,
      h("p", {}, h("button", { type: "submit", id: "create" }, t.new_table))
    );
    createForm.addEventListener("submit", (event) => {
      event.preventDefault();
      void sitDown(
        () => client.createTable({
          name: `${t.table} ${me.username}`,
          room: roomSelect.value,
          stake: Number(stake.value),
          max_seats: Number(seatsSelect.value)
        })
      );
    });
    const openTables = h(
      "section",
      { class: "card-panel", id: "open-tables", "aria-labelledby": "open-title" },
      h("h2", { id: "open-title" }, t.open_tables),
      open.length ? h(
        "ul",
        { class: "table-list" },
        ...open.map(
          (table) => h(
            "li",
            { "data-table": table.id },
            h("span", {}, `${table.name} · ${table.room} · ${t.stake} ${table.stake} · ${table.seats.map((s) => s.username).join(", ")} (${table.seats.length}/${table.max_seats})`),
            table.seats.some((s) => s.username === me.username) ? h("a", { href: `#/table/${table.id}` }, t.my_table) : h(
              "span",
              { class: "actions" },
              table.open_seats > 0 ? h(
                "button",
                { type: "button", class: "join", "data-table": table.id, onclick: () => void sitDown(() => client.join(table.id)) },
                t.join
              ) : null,
              table.spectators && table.current_hand_id !== null ? h("a", { href: `#/table/${table.id}`, class: "watch" }, t.watch) : null
            )
          )
        )
      ) : h("p", {}, t.no_open_tables)
    );
    frame(
      `${t.lobby} — ${me.display_name || me.username}`,
      wallet,
      mine ? h("p", {}, h("a", { href: `#/table/${mine}`, id: "my-table" }, t.my_table)) : null,
      practice,
      openTables,
      createForm
    );
  }
  function forgetToken() {
    client.token = void 0;
    localStorage.removeItem(TOKEN_KEY);
    authPage("signup");
  }
  var STREAM_AT_ONCE_MS = 3e3;
  var MULTI_CUOC = /* @__PURE__ */ new Set(["tom", "leo", "thien_khai", "chiu", "an_bon"]);
  async function tablePage(tableId) {
    const signal = stop.signal;
    frame(`${t.table} ${tableId}`, h("p", {}, t.loading));
    let table;
    try {
      table = await client.table(tableId);
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) return forgetToken();
      return showError(error);
    }
    const state = { table, view: null, transport: "sse", cuoc: [], busy: false, readySent: false, me: null };
    rerender = () => drawTable(state);
    const [cuoc, me] = await Promise.all([enabledCuoc(table), client.api.GET("/api/v1/me", {})]);
    state.cuoc = cuoc;
    state.me = me.data?.id ?? null;
    noteReady(state);
    drawTable(state);
    let handId = table.current_hand_id;
    while (!signal.aborted) {
      if (handId !== null) {
        state.readySent = false;
        await followHand(state, handId, signal);
      }
      if (signal.aborted) return;
      handId = await nextDeal(state, signal);
    }
  }
  function noteReady(state) {
    const seat = state.table.seats.find((s) => s.user_id === state.me);
    if (seat?.ready) state.readySent = true;
  }
  async function nextDeal(state, signal) {
    const done = state.view?.hand_id ?? null;
    while (!signal.aborted) {
      await new Promise((resolve) => {
        state.wake = resolve;
        void sleep2(2e3, signal).then(resolve);
      });
      if (signal.aborted) return null;
      try {
        state.table = await client.table(state.table.id);
      } catch (error) {
        showError(error);
        continue;
      }
      noteReady(state);
      const current = state.table.current_hand_id;
      if (current !== null && current !== done) {
        state.view = null;
        return current;
      }
      if (!state.view) drawTable(state);
    }
    return null;
  }
  async function enabledCuoc(table) {
    try {
      const result = await client.api.GET("/api/v1/rules/presets", {});
      const preset = result.data?.find((p) => p.preset === table.ruleset.preset);
      if (!preset) return [];
      return Object.entries(preset.cuoc).filter(([slug, value]) => value.enabled && table.ruleset.overrides[`cuoc.${slug}.enabled`] !== false).map(([slug]) => slug);
    } catch {
      return [];
    }
  }
  async function followHand(state, handId, signal) {
    const show = (view2) => {
      if (signal.aborted) return;
      const old = state.view;
      if (old && old.hand_id === view2.hand_id && view2.seq < old.seq) return;
      if (old && old.hand_id === view2.hand_id && view2.seq === old.seq && old.settlement?.quan && !view2.settlement?.quan) return;
      state.view = view2;
      drawTable(state);
    };
    let view = await client.hand(handId);
    show(view);
    let quanWaits = 0;
    let shortStreams = 0;
    while (!signal.aborted) {
      view = state.view ?? view;
      if (view.status !== "playing") {
        if (view.settlement && !view.settlement.quan && quanWaits++ < 20) {
          await sleep2(500, signal);
          show(await client.hand(handId));
          continue;
        }
        return;
      }
      if (state.transport === "sse") {
        try {
          const headers = client.token ? { Authorization: `Bearer ${client.token}` } : {};
          const url = `${client.baseUrl}/api/v1/hands/${handId}/events?after_seq=${view.seq}`;
          let heard = 0;
          const opened = Date.now();
          for await (const event of sseEvents(url, { headers, reconnects: 0, signal })) {
            if (!event.data.includes('"seq"')) continue;
            heard++;
            const fresh = await client.hand(handId);
            show(fresh);
            if (fresh.status !== "playing") break;
          }
          if (signal.aborted || state.view?.status !== "playing") continue;
          if (Date.now() - opened > STREAM_AT_ONCE_MS) {
            shortStreams = 0;
            continue;
          }
          if (heard > 0 && ++shortStreams < 2) continue;
          state.transport = "poll";
          drawTable(state);
        } catch (error) {
          if (signal.aborted) return;
          state.transport = "poll";
          drawTable(state);
        }
      }
      try {
        show(await client.nextView(handId, view.seq, 1));
      } catch (error) {
        if (signal.aborted) return;
        if (!(error instanceof Error && error.message.includes("nothing moved"))) throw error;
      }
    }
  }
  function sleep2(ms, signal) {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      signal.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
  function seatName(view, seat) {
    if (seat === null || seat === void 0) return "—";
    const player = view.players[seat];
    const name = player?.username ?? `${t.seat} ${seat + 1}`;
    const bot = name.startsWith("bot~") ? ` (${t.bot})` : "";
    const me = view.my_seat === seat ? ` (${t.you})` : "";
    return `${name}${bot}${me}`;
  }
  function cardList(cards, cls = "cards") {
    return h("ul", { class: cls }, ...cards.map((c) => h("li", {}, cardSvg(c, t))));
  }
  function moveLabel(move) {
    switch (move.type) {
      case "eat":
        return `${t.move.eat} ${cardName(move.card, t)} ${t.with} ${cardName(move.with, t)}`;
      case "chiu":
      case "tra_cua":
      case "discard":
        return `${t.move[move.type]} ${cardName(move.card, t)}`;
      default:
        return t.move[move.type];
    }
  }
  function moveInput(move) {
    const { seat: _seat, ...rest } = move;
    delete rest.system;
    return rest;
  }
  async function play(state, move) {
    const view = state.view;
    if (!view || state.busy) return;
    state.busy = true;
    clearError();
    try {
      await client.move(view.hand_id, move, { expectedSeq: view.seq });
      const fresh = await client.hand(view.hand_id);
      if (!state.view || fresh.seq >= state.view.seq) state.view = fresh;
    } catch (error) {
      if (!(error instanceof ApiError && error.code === "stale_seq")) showError(error);
    } finally {
      state.busy = false;
      drawTable(state);
    }
  }
  var clockTimer;
  function drawTable(state) {
    const { table, view } = state;
    if (clockTimer !== void 0) window.clearInterval(clockTimer);
    const heading = view ? `${t.table} ${table.id} · ${t.hand_no} ${view.number}` : `${t.table} ${table.id}`;
    const check = table.reality_check;
    const reminder = check?.due ? h("p", { id: "reality-check", class: "reminder", role: "note" }, t.reality_check(check.minutes_played, check.net)) : null;
    if (!view) {
      frame(heading, reminder, nextHandPanel(state, t.waiting_deal));
      return;
    }
    const mine = view.my_seat;
    const legal = view.status === "playing" ? view.legal_moves : [];
    const discards = new Set(legal.filter((m) => m.type === "discard").map((m) => m.card));
    const status = h("p", { id: "status", role: "status", "aria-live": "polite" });
    const clock = h("span", { id: "clock" });
    if (view.status === "playing") {
      status.append(
        view.turn_seat === mine ? t.my_turn : `${t.waiting} ${seatName(view, view.turn_seat)}`,
        " · ",
        clock
      );
      const tick = () => {
        const left = view.deadline ? Math.max(0, Math.round((Date.parse(view.deadline) - Date.now()) / 1e3)) : null;
        clock.textContent = left === null ? "" : `${left} ${t.seconds}`;
      };
      tick();
      clockTimer = window.setInterval(tick, 1e3);
    }
    const info = h(
      "dl",
      { class: "info" },
      h("dt", {}, t.stock),
      h("dd", { id: "stock" }, view.stock_count),
      h("dt", {}, t.turn),
      h("dd", { id: "turn" }, view.status === "playing" ? seatName(view, view.turn_seat) : "—"),
      h("dt", {}, "↔"),
      h("dd", { id: "transport" }, state.transport === "sse" ? t.connection_sse : t.connection_poll)
    );
    const offer = view.offer ? h(
      "section",
      { id: "offer", class: "offer", "aria-label": t.offer },
      h("h2", {}, t.offer),
      cardSvg(view.offer.card, t),
      h(
        "p",
        {},
        `${seatName(view, view.offer.by)} — ${view.offer.source === "stock" ? t.from_stock : t.from_discard}`,
        view.status === "playing" ? ` · ${t.offered_to} ${seatName(view, view.turn_seat)}` : ""
      )
    ) : null;
    const seats = h(
      "ol",
      { id: "seats", class: "seats" },
      ...Array.from({ length: view.n_seats }, (_, seat) => {
        const pub = view.seats[seat];
        const mat = view.mats[seat] ?? [];
        const door = view.doors[seat] ?? [];
        return h(
          "li",
          {
            class: `seat${seat === view.turn_seat && view.status === "playing" ? " turn" : ""}${seat === mine ? " mine" : ""}`,
            "data-seat": seat
          },
          h(
            "h2",
            {},
            seatName(view, seat),
            seat === view.dealer ? h("span", { class: "badge" }, t.dealer) : null,
            pub?.bao ? h("span", { class: "badge warn" }, t.bao) : null
          ),
          h("p", { class: "count" }, `${pub?.hand_count ?? 0} ${t.cards_left}`),
          h("h3", {}, t.door),
          cardList(door, "cards small door"),
          h("h3", {}, t.mat),
          h("ul", { class: "cards small mat" }, ...mat.map((g) => h("li", { class: `group ${g.kind}` }, ...g.cards.map((c) => cardSvg(c, t))))),
          pub?.hand?.length && seat !== mine ? [h("h3", {}, t.groups.hand), cardList(pub.hand, "cards small revealed")] : null,
          pub?.faults.length ? h("p", { class: "faults" }, `${t.faults}: ${pub.faults.map((f) => t.fault_names[f.slug] ?? f.slug).join(", ")}`) : null
        );
      })
    );
    const groups = view.analysis ? {
      chan: view.analysis.chan ?? [],
      ca: view.analysis.ca ?? [],
      ba_dau: view.analysis.ba_dau ?? [],
      que: view.analysis.que ?? []
    } : groupHand(view.hand);
    const cardButton = (code) => discards.has(code) ? h(
      "button",
      {
        type: "button",
        class: "card-button",
        "data-move": "discard",
        "data-card": code,
        "data-suggested": view.analysis?.quick_select === code,
        onclick: () => void play(state, { type: "discard", card: code })
      },
      cardSvg(code, t)
    ) : cardSvg(code, t);
    const groupRow = (key, sets) => sets.length ? h(
      "div",
      { class: `group-row ${key}` },
      h("h3", {}, t.groups[key]),
      h("ul", { class: "cards" }, ...sets.map((set) => h("li", { class: "set" }, ...set.map(cardButton))))
    ) : null;
    const hand = mine === null || view.spectator ? null : h(
      "section",
      { id: "hand", "aria-labelledby": "hand-title" },
      h("h2", { id: "hand-title" }, t.my_hand),
      view.my_faults?.length ? h("p", { class: "faults", id: "my-faults" }, `${t.my_faults}: ${(view.my_faults ?? []).map((f) => t.fault_names[f.slug] ?? f.slug).join(", ")}`) : null,
      groupRow("chan", groups.chan),
      groupRow("ba_dau", groups.ba_dau),
      groupRow("ca", groups.ca),
      groupRow("que", [...groups.que].sort(compareCards).map((c) => [c]))
    );
    const moves = legal.filter((m) => m.type !== "discard" && m.type !== "declare" && m.type !== "set_prefs");
    const movePanel = view.status === "playing" && mine !== null ? h(
      "section",
      { id: "moves", "aria-labelledby": "moves-title" },
      h("h2", { id: "moves-title" }, t.moves),
      moves.length || discards.size ? h(
        "div",
        { class: "move-buttons" },
        ...moves.map(
          (m) => h(
            "button",
            {
              type: "button",
              "data-move": m.type,
              class: m.type === "u" ? "primary" : null,
              onclick: () => void play(state, moveInput(m))
            },
            moveLabel(m)
          )
        )
      ) : h("p", {}, legal.some((m) => m.type === "declare") ? "" : t.no_moves),
      discards.size ? h("p", { id: "discard-hint" }, t.discard_hint) : null,
      legal.some((m) => m.type === "declare") ? declarePicker(state) : null,
      h("p", { class: "help" }, t.keys_help)
    ) : null;
    const result = view.status !== "playing" ? resultPanel(state, view) : null;
    frame(heading, h("div", { class: "board" }, h("div", { class: "play" }, status, reminder, info, offer, result, movePanel, hand), seats));
  }
  function declarePicker(state) {
    const inputs = state.cuoc.map(
      (slug) => MULTI_CUOC.has(slug) ? h("input", { type: "number", min: 0, max: 4, value: 0, id: `cuoc-${slug}`, name: slug, inputmode: "numeric" }) : h("input", { type: "checkbox", id: `cuoc-${slug}`, name: slug })
    );
    const form = h(
      "form",
      { id: "declare", class: "card-panel" },
      h(
        "fieldset",
        {},
        h("legend", {}, t.declare_title),
        h("p", {}, t.declare_help),
        h(
          "ul",
          { class: "cuoc-list" },
          ...state.cuoc.map((slug, i) => h("li", {}, inputs[i], h("label", { for: `cuoc-${slug}` }, t.cuoc[slug] ?? slug)))
        )
      ),
      h("button", { type: "submit", id: "declare-send", class: "primary" }, t.declare_send),
      h(
        "button",
        { type: "button", id: "declare-auto", onclick: () => void play(state, { type: "declare", auto: true }) },
        t.declare_auto
      )
    );
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const cuoc = {};
      for (const input of inputs) {
        const n = input.type === "checkbox" ? Number(input.checked) : Number(input.value);
        if (n > 0) cuoc[input.name] = n;
      }
      void play(state, { type: "declare", cuoc });
    });
    return form;
  }
  function cuocText(cuoc) {
    const parts = Object.entries(cuoc ?? {}).map(([slug, n]) => `${t.cuoc[slug] ?? slug}${n > 1 ? ` ×${n}` : ""}`);
    return parts.join(", ") || "—";
  }
  function resultPanel(state, view) {
    const outcome = view.outcome;
    const rows = [];
    const row = (label, value, id) => rows.push(h("tr", {}, h("th", { scope: "row" }, label), h("td", id ? { id } : {}, value)));
    if (outcome) {
      row(t.result, t.results[outcome.result], "outcome");
      if (outcome.seat !== void 0) row(t.winner, seatName(view, outcome.seat));
    }
    if (view.win?.card) row(t.win_card, cardSvg(view.win.card, t));
    const d = view.declaration;
    if (d) {
      row(t.declared, cuocText(d.cuoc), "declared");
      row(t.true_cuoc, cuocText(d.true_cuoc), "true-cuoc");
      row(t.verdict, t.verdicts[d.verdict], "verdict");
      const score = (s) => `${s.base} + ${s.ga} = ${s.total}`;
      row(`${t.declared} — ${t.score}`, score(d.declared_score));
      row(`${t.true_cuoc} — ${t.score}`, score(d.true_score));
    }
    const settlement = view.settlement;
    const transfers = settlement?.transfers.length ? h(
      "ul",
      { id: "transfers" },
      ...settlement.transfers.map(
        (tr) => h(
          "li",
          {},
          `${seatName(view, tr.from)} → ${tr.to === "pot" ? "pot" : seatName(view, tr.to)}: ${tr.points} ${t.points.toLowerCase()} (${tr.reason})`
        )
      )
    ) : null;
    const quan = settlement?.quan;
    const quanPart = !settlement ? null : !quan ? h("p", {}, t.quan_pending) : quan.practice ? h("p", { id: "quan" }, t.practice_quan) : h(
      "ul",
      { id: "quan" },
      ...quan.seats.map((s) => h("li", {}, `${seatName(view, s.seat)}: ${s.net > 0 ? "+" : ""}${s.net} ${t.quan}`))
    );
    return h(
      "section",
      { id: "result", class: "card-panel", "aria-labelledby": "result-title" },
      h("h2", { id: "result-title" }, t.result),
      h("table", {}, h("tbody", {}, ...rows)),
      transfers ? h("h3", {}, t.transfers) : null,
      transfers,
      h("h3", {}, t.quan_net),
      quanPart,
      nextHandPanel(state, null)
    );
  }
  function nextHandPanel(state, note) {
    const seated = state.table.seats.some((s) => s.user_id === state.me);
    if (!seated) return state.view ? null : h("p", { id: "spectating" }, t.spectating);
    const seats = state.view ? null : h(
      "ul",
      { id: "waiting-seats" },
      ...state.table.seats.map(
        (s) => h("li", {}, `${t.seat} ${s.number + 1}: ${s.username}${s.bot ? ` (${t.bot})` : ""} — ${s.ready ? t.ready_yes : t.ready_no}`)
      )
    );
    return h(
      "div",
      { class: "next" },
      note ? h("p", {}, note) : null,
      seats,
      state.readySent ? h("p", { id: "waiting-deal" }, t.waiting_deal) : h(
        "button",
        {
          type: "button",
          id: "next-hand",
          class: "primary",
          onclick: async () => {
            clearError();
            try {
              const ready = await client.ready(state.table.id);
              state.table = ready.table;
              state.readySent = true;
              drawTable(state);
              state.wake?.();
            } catch (error) {
              showError(error);
            }
          }
        },
        state.view ? t.next_hand : t.ready
      )
    );
  }
  var KEYS = { b: "draw", d: "pass", u: "u", c: "chiu", a: "eat" };
  document.addEventListener("keydown", (event) => {
    const target = event.target;
    if (target && (target.tagName === "INPUT" || target.tagName === "SELECT" || target.tagName === "TEXTAREA")) return;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const key = event.key.toLowerCase();
    let button = null;
    if (key === "q") {
      button = document.querySelector(".card-button[data-suggested]") ?? document.querySelector(".card-button");
    } else if (KEYS[key]) {
      button = document.querySelector(`#moves button[data-move="${KEYS[key]}"]`);
    }
    if (button) {
      event.preventDefault();
      button.click();
    }
  });
  function route() {
    stop.abort();
    stop = new AbortController();
    clearError();
    if (!client.token) return authPage("signup");
    const match = /^#\/table\/(\d{1,18})$/.exec(location.hash);
    if (match) {
      const tableId = Number(match[1]);
      rerender = () => frame(`${t.table} ${tableId}`);
      void tablePage(tableId).catch(showError);
      return;
    }
    void lobbyPage();
  }
  window.addEventListener("hashchange", route);
  route();
})();
