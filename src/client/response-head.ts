import type { IncomingHttpHeaders } from 'node:http';
import { sanitizeMessage } from './classify-error.js';
import { contentCodings, decodingSink } from './content-encoding.js';
import type { ApiEndpoint } from './endpoints/index.js';
import { errorMessageOf, excerpt } from './error-body.js';
import type { BodyControl, BodySink } from './exchange.js';
import { ExcerptBody, JsonBody, SseBody, type BodyErrorClassifier } from './read-body.js';
import { replicaOf } from './replica-header.js';
import type { RequestTimer } from './request-timer.js';
import type { ResponseCollector } from './response-collector.js';
import { parseRetryAfterMs } from './retry-after.js';
import { headerText } from './server-answers.js';
import type { RequestError } from './types.js';

/*
 * A response's head, read as it arrives (inside undici's parser callback): what it says of the answer (its status,
 * its replica, its Retry-After), and which reader its body goes to: an error body's excerpt, a page that is no answer,
 * the endpoint's stream or JSON reader, each behind the decoder of its Content-Encoding. ChatClient.send's part.
 */

/** What the client gives every head's reading: the replica headers to read, the secrets to redact, the API read. */
export interface HeadContext {
  readonly replicaHeaders: readonly string[];
  readonly secrets: readonly string[];
  readonly endpoint: ApiEndpoint;
}

/** What reads one attempt's body, and what to call when it is read. */
export interface BodyRead {
  collector: ResponseCollector;
  timer: RequestTimer;
  classify: BodyErrorClassifier;
  /** The request asked for a stream. */
  stream: boolean;
  done: () => void;
  /** Told the replica that answered, as its head arrives (ChatRequest.onReplica). */
  onReplica?: (replica: string) => void;
}

/** The sink of a response stopped at its head: nothing of it is read. */
const IGNORED_BODY: BodySink = { data() {}, end() {}, error() {} };

/**
 * The response head arrived: records it and returns what reads the body. A non-2xx status reads an excerpt of its
 * error body; a coding chatload cannot decode stops the response.
 */
export function readResponseHead(status: number, responseHeaders: IncomingHttpHeaders, atMs: number, control: BodyControl, read: BodyRead, context: HeadContext): BodySink {
  const { collector, timer, done } = read;
  timer.noteHeaders(atMs);
  const result = collector.result;
  result.headersAtMs = atMs;
  result.httpStatus = status;
  const replica = context.replicaHeaders.length === 0 ? undefined : replicaOf(responseHeaders, context.replicaHeaders);
  if (replica !== undefined) {
    result.replica = replica;
    read.onReplica?.(replica);
  }
  const coding = contentCodings(headerText(responseHeaders['content-encoding']));
  if (status < 200 || status > 299) {
    const retryAfterMs = parseRetryAfterMs(responseHeaders['retry-after']);
    if (retryAfterMs !== undefined) result.retryAfterMs = retryAfterMs;
    const excerptBody = (c: BodyControl): BodySink =>
      new ExcerptBody(c, (text) => {
        collector.fail(statusError(status, retryAfterMs, text, context.secrets), performance.now());
        done();
      });
    // A body in a coding chatload cannot decode is shown as it came.
    return 'unsupported' in coding || coding.codings.length === 0 ? excerptBody(control) : decodingSink(coding.codings, coding.encoding, control, excerptBody);
  }
  if ('unsupported' in coding) {
    control.stop();
    collector.fail({ kind: 'other', message: `the server sent Content-Encoding: ${coding.unsupported}, which chatload cannot decode (it asks for identity)` }, performance.now());
    done();
    return IGNORED_BODY;
  }
  const contentType = headerText(responseHeaders['content-type']).toLowerCase();
  // A page (a proxy's login or error page answered 200) is no answer, and asking again gets the same page: a
  // malformed stream, named by its content type, not a truncated one that is retried (issue #35).
  if (/html|xml/.test(contentType)) {
    const page = (c: BodyControl): BodySink =>
      new ExcerptBody(c, (text) => {
        const message = `the server answered HTTP ${status} with Content-Type ${contentType}, not a chat completion: ${sanitizeMessage(text, context.secrets, 160)}`;
        collector.fail({ kind: 'malformed_stream', message }, performance.now());
        done();
      });
    return coding.codings.length === 0 ? page(control) : decodingSink(coding.codings, coding.encoding, control, page);
  }
  // Decide by what came back, not what was asked: a server may ignore `stream: true` and answer JSON.
  const asSse = contentType.includes('text/event-stream') || (read.stream && !contentType.includes('json'));
  const events = context.endpoint.reader(collector);
  const body = (c: BodyControl): BodySink => new (asSse ? SseBody : JsonBody)(collector, timer, read.classify, events, c, done);
  return coding.codings.length === 0 ? body(control) : decodingSink(coding.codings, coding.encoding, control, body);
}

/** The error of a non-2xx answer, with the server's own words when its body is an OpenAI error object. */
function statusError(status: number, retryAfterMs: number | undefined, text: string, secrets: readonly string[]): RequestError {
  const bodyExcerpt = sanitizeMessage(text, secrets, 200);
  const said = errorMessageOf(bodyExcerpt);
  const error: RequestError = {
    kind: 'http_status',
    message: `HTTP ${status}${said.length > 0 ? `: ${excerpt(said, 120)}` : ''}`,
    status,
    bodyExcerpt,
  };
  if (retryAfterMs !== undefined) error.retryAfterMs = retryAfterMs;
  return error;
}
