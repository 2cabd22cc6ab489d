import { z } from 'zod';
import { ConfigError } from '../errors/index.js';
import { parseShard } from '../engine/partition.js';
import { parseDistributionFlag } from '../synth/distributions.js';
import { parseFaultSpec } from '../sim/faults.js';

/** --start-at as epoch ms: an ISO 8601 time, or epoch seconds (below 1e11) or milliseconds. Undefined when unreadable. */
export function parseStartAt(text: string): number | undefined {
  const trimmed = text.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) {
    const n = Number(trimmed);
    return n < 1e11 ? n * 1000 : n;
  }
  const ms = Date.parse(trimmed);
  return Number.isFinite(ms) && /^\d{4}-\d{2}-\d{2}T/.test(trimmed) ? ms : undefined;
}

/*
 * The one schema and defaults table for `chatload run`, shared by the CLI and the library API. Options are
 * validated and defaulted here once; past this point code takes a readonly RunOptions and never checks again.
 * Names follow the reference tool's flags (camelCase of --num-clients, --max-active-conversations, ...).
 */

const positiveInt = z.number().int().positive();
const nonNegative = z.number().nonnegative();
const positive = z.number().positive();

const schema = z
  .object({
    inputFile: z.string().min(1).optional(),
    outputFile: z.string().min(1).optional(),
    outputDir: z.string().min(1).optional(),
    statsJsonOutput: z.string().min(1).optional(),
    seed: z.number().int().default(0),
    model: z.string().min(1).optional(),
    tokenizer: z.string().min(1).optional(),
    trustRemoteCode: z.boolean().default(false),
    servedModelName: z.string().min(1).optional(),
    url: z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' }).optional(),
    apiKey: z.string().optional(),
    headers: z.array(z.string().regex(/^\s*[A-Za-z0-9!#$%&'*+.^_`|~-]+\s*[:=].*$/, 'expected "Name: value" or "Name=value"')).default([]),
    numClients: positiveInt.default(1),
    maxActiveConversations: positiveInt.optional(),
    maxNumRequests: positiveInt.optional(),
    maxTurns: positiveInt.optional(),
    earlyStop: z.boolean().default(true),
    warmupStep: z.boolean().default(false),
    warmupPercentages: z.array(z.number().min(0).max(99.999)).min(1).default([0]),
    limitMinTokens: z.number().int().default(0),
    limitMaxTokens: z.number().int().default(0),
    requestRate: nonNegative.default(0),
    maxRetries: z.number().int().nonnegative().default(0),
    conversationSampling: z.enum(['round_robin', 'random']).default('round_robin'),
    requestTimeoutSec: positive.default(120),
    ttftTimeoutSec: positive.optional(),
    idleTimeoutSec: positive.optional(),
    benchmarkTimeoutSec: positive.default(3600),
    durationSec: positive.optional(),
    readyTimeoutSec: nonNegative.default(60),
    stopGraceSec: nonNegative.default(3),
    stream: z.boolean().default(true),
    sendConversationId: z.boolean().default(false),
    replayDatasetAnswers: z.boolean().default(false),
    verifyOutput: z.boolean().default(false),
    ignoreEos: z.boolean().default(false),
    temperature: z.number().nonnegative().optional(),
    extraBody: z.record(z.string(), z.unknown()).optional(),
    maxErrorRate: z.number().min(0).max(1).default(0),
    sessionRate: positive.optional(),
    burstiness: positive.default(1),
    maxConcurrency: positiveInt.optional(),
    thinkTime: z.string().min(1).optional(),
    rampUp: z
      .string()
      .regex(/^linear:\d+(\.\d+)?:\d+(\.\d+)?:\d+(\.\d+)?$/, 'expected linear:START:END:SECONDS, e.g. linear:1:20:60')
      .optional(),
    goodput: z.array(z.string().regex(/^(ttft|tpot|e2el):\d+(\.\d+)?$/, 'expected ttft:MS, tpot:MS or e2el:MS')).optional(),
    scrapeMetrics: z.union([z.boolean(), z.url({ protocol: /^https?$/, error: 'expected an http:// or https:// URL' })]).default(false),
    scrapeIntervalSec: positive.default(5),
    resetPrefixCache: z.boolean().default(false),
    workers: z.union([z.literal('auto'), positiveInt]).default('auto'),
    shard: z
      .string()
      .regex(/^\d+\/\d+$/, 'expected I/N, e.g. 0/4 (0-based shard index I below the shard count N)')
      .refine((v) => parseShard(v) !== undefined, 'expected I/N with 0 <= I < N')
      .optional(),
    startAt: z
      .string()
      .refine((v) => parseStartAt(v) !== undefined, 'expected an ISO 8601 time (2026-12-01T10:00:00Z) or epoch seconds/milliseconds')
      .optional(),
    report: z.boolean().default(true),
    excelOutput: z.union([z.boolean(), z.string().min(1)]).default(false),
    csv: z.union([z.boolean(), z.string().min(1)]).default(false),
    simProfile: z.string().min(1).default('demo'),
    simFaults: z.string().optional(),
  })
  .strict()
  .superRefine((o, ctx) => {
    const limited = o.limitMinTokens > 0 || o.limitMaxTokens > 0;
    if (limited && (o.limitMinTokens < 1 || o.limitMaxTokens < 1)) {
      ctx.addIssue({ code: 'custom', path: ['limitMinTokens'], message: 'set both --limit-min-tokens and --limit-max-tokens to positive values' });
    } else if (limited && o.limitMinTokens > o.limitMaxTokens) {
      ctx.addIssue({ code: 'custom', path: ['limitMinTokens'], message: `must not exceed --limit-max-tokens (${o.limitMaxTokens})` });
    }
    if (o.maxActiveConversations !== undefined && o.maxActiveConversations < o.numClients) {
      ctx.addIssue({
        code: 'custom',
        path: ['maxActiveConversations'],
        message: `must be at least --num-clients (${o.numClients}), so that every client has a conversation`,
      });
    }
    const openLoop = isOpenLoop(o);
    if (!openLoop && (o.maxConcurrency !== undefined || o.thinkTime !== undefined)) {
      const flag = o.maxConcurrency !== undefined ? 'maxConcurrency' : 'thinkTime';
      ctx.addIssue({ code: 'custom', path: [flag], message: 'applies to open-loop sessions: add --session-rate (or --ramp-up)' });
    }
    if (openLoop && o.requestRate > 0) {
      ctx.addIssue({ code: 'custom', path: ['requestRate'], message: 'paces closed-loop clients; with --session-rate the arrivals set the pace' });
    }
    if (o.rampUp !== undefined && o.sessionRate !== undefined && Number(o.rampUp.split(':')[2]) !== o.sessionRate) {
      ctx.addIssue({ code: 'custom', path: ['rampUp'], message: `ends at ${o.rampUp.split(':')[2]}/s but --session-rate is ${o.sessionRate}/s; give one or make them agree` });
    }
    if (o.simFaults !== undefined) {
      try {
        parseFaultSpec(o.simFaults, '--sim-faults');
      } catch (error) {
        ctx.addIssue({ code: 'custom', path: ['simFaults'], message: (error as Error).message.replace(/^--sim-faults:?\s*/, '') });
      }
    }
    if (o.thinkTime !== undefined) {
      try {
        parseDistributionFlag(o.thinkTime, '--think-time');
      } catch (error) {
        ctx.addIssue({ code: 'custom', path: ['thinkTime'], message: (error as Error).message.replace(/^--think-time:?\s*/, '') });
      }
    }
    if (o.maxTurns !== undefined && o.maxTurns < 2) {
      ctx.addIssue({ code: 'custom', path: ['maxTurns'], message: 'counts messages (user and assistant): expected 2 or more' });
    }
  });

/** True when the options select open-loop sessions (--session-rate or --ramp-up) rather than the closed loop. */
export function isOpenLoop(options: { sessionRate?: number; rampUp?: string }): boolean {
  return options.sessionRate !== undefined || options.rampUp !== undefined;
}

/** What a caller may pass: every field optional except where a default makes it so. */
export type RunOptionsInput = z.input<typeof schema>;
/** Normalized, defaulted run options. */
export type RunOptions = Readonly<z.output<typeof schema>>;

/** `numClients` → `--num-clients`, so errors name the flag a CLI user typed. */
export function flagName(key: string): string {
  if (key === 'headers') return '--header';
  return `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

/**
 * The built-in demo (no --url and no -i) is a first-time user's first run: unless told otherwise it uses 16
 * clients over 32 active conversations and drains every conversation, so it finishes in about half a minute.
 */
export const DEMO_DEFAULTS = { numClients: 16, maxActiveConversations: 32, earlyStop: false } as const;

function withDemoDefaults(input: RunOptionsInput): RunOptionsInput {
  if (input.url !== undefined || input.inputFile !== undefined) return input;
  return {
    ...input,
    numClients: input.numClients ?? DEMO_DEFAULTS.numClients,
    maxActiveConversations: input.maxActiveConversations ?? (input.numClients === undefined ? DEMO_DEFAULTS.maxActiveConversations : undefined),
    earlyStop: input.earlyStop ?? DEMO_DEFAULTS.earlyStop,
  };
}

/** Validates and defaults run options. Throws one ConfigError that lists every problem. */
export function normalizeRunOptions(input: RunOptionsInput): RunOptions {
  const parsed = schema.safeParse(withDemoDefaults(input));
  if (parsed.success) return Object.freeze(parsed.data);
  const problems = parsed.error.issues.map((issue) => {
    const key = issue.path.length > 0 ? String(issue.path[0]) : '';
    if (issue.code === 'unrecognized_keys') return `unknown option(s) ${issue.keys.map(flagName).join(', ')}`;
    return `${key ? flagName(key) : 'options'}: ${issue.message}`;
  });
  throw new ConfigError(`invalid options: ${problems.join('; ')}`);
}
