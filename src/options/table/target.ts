import * as z from 'zod';
import { httpUrl, option, positiveSeconds, readNumber, text } from '../define.js';
import { headersSchema } from '../values/headers.js';
import { holdsHeaderControl } from '../../util/control-chars.js';

/** The target server: where requests go, as whom, and what else is read from it. */
export const targetOptions = {
  url: option({
    flags: '-u, --url <url>',
    group: 'target',
    help: 'base URL of the server, e.g. http://localhost:8000 (a trailing /v1 is fine)',
    env: 'OPENAI_BASE_URL',
    defaultText: 'start the built-in simulator',
    schema: httpUrl,
  }),
  model: option({ flags: '-m, --model <name>', group: 'target', help: 'model name', defaultText: 'the first id from GET /v1/models', schema: text }),
  servedModelName: option({ flags: '--served-model-name <name>', group: 'target', help: 'model name sent in requests, when it differs from --model', schema: text }),
  apiKey: option({
    flags: '--api-key <key>',
    group: 'target',
    help: 'API key, sent as a Bearer token; never written anywhere',
    env: 'OPENAI_API_KEY',
    // A control character (the newline `$(cat keyfile)` can leave) makes every request's header invalid: undici
    // refuses it, and a readiness wait on it never ended (issue #34). Refused at once; the key is never echoed. A tab,
    // which a header value may hold, is refused too: no key has one.
    schema: z.string().refine((key) => !holdsHeaderControl(key) && !key.includes('\t'), 'holds a control character (a line break, as `$(cat keyfile)` can leave): give the key alone'),
  }),
  headers: option({
    flags: '--header <line>',
    group: 'target',
    help: "extra request header 'Name: value' or 'Name=value' (repeatable)",
    repeatable: true,
    schema: headersSchema,
    default: [],
  }),
  resetPrefixCache: option({
    flags: '--reset-prefix-cache',
    group: 'target',
    help: "empty the server's prefix cache before the run so it starts cold, by the detected engine's method (docs/ENGINES.md)",
    schema: z.boolean(),
    default: false,
  }),
  scrapeMetrics: option({
    flags: '--scrape-metrics [url]',
    group: 'target',
    help:
      "read the server's Prometheus /metrics before, during and after the run (default URL: <url>/metrics); repeatable: " +
      'one page per replica behind a router, whose counter deltas give per-replica totals (docs/METRICS.md, "Replicas")',
    repeatable: true,
    // One URL, or several (repeated): each must be a URL, and a page given twice would count its replica twice.
    schema: z.union([
      z.boolean(),
      httpUrl,
      z
        .array(httpUrl)
        .min(1)
        .refine((urls) => new Set(urls).size === urls.length, 'gives the same URL twice: give each replica\'s /metrics page once'),
    ]),
    default: false,
  }),
  replicaHeader: option({
    flags: '--replica-header <name>',
    group: 'target',
    help: 'response header that names the replica behind a router that served each request (docs/METRICS.md, "Replicas")',
    defaultText: 'the known ones, docs/ENGINES.md',
    schema: z
      .string()
      .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, "expected an HTTP header name (letters, digits and -, e.g. x-served-by), not empty"),
  }),
  scrapeIntervalSec: option({
    flags: '--scrape-interval-sec <s>',
    group: 'target',
    help: 'seconds between /metrics scrapes during the run',
    read: readNumber,
    schema: positiveSeconds,
    default: 5,
  }),
};
