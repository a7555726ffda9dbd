/**
 * One upstream call driven by undici's dispatch handler instead of undici.request(): no Readable stream, async
 * iterator or signal plumbing per call, just one object holding the call's state and a timer (gateway/upstream-client.ts).
 */
import type { Duplex } from 'node:stream';
import type { Dispatcher } from 'undici';
import { classify, FAILURE_MESSAGES, UpstreamCallError } from './upstream-errors.js';

export interface UpstreamResult {
  status: number;
  /** As undici parsed them: lower-case names, repeated headers as arrays. */
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  contentType: string | undefined;
  /** From the call to the end of the body. */
  latencyMs: number;
}

/**
 * One call's state and undici's dispatch handler for it. Everything that can end the call (completion, an undici
 * error, the deadline, the caller's signal, the size cap) goes through `fail`/`onResponseEnd`, and the first one
 * wins. The object doubles as the signal's listener (handleEvent) and the timer's argument, so no closures are made.
 */
export class UpstreamCall implements Dispatcher.DispatchHandler {
  readonly promise: Promise<UpstreamResult>;
  private resolve!: (result: UpstreamResult) => void;
  private reject!: (err: UpstreamCallError) => void;
  private readonly maxBytes: number;
  private readonly bodyless: boolean;
  private readonly timeoutMs: number;
  private readonly started: number;
  private readonly signal: AbortSignal | undefined;
  private readonly timer: NodeJS.Timeout;
  private controller: Dispatcher.DispatchController | null = null;
  private failure: UpstreamCallError | null = null;
  private settled = false;
  private status = 0;
  private headers: Record<string, string | string[] | undefined> | null = null;
  private readonly chunks: Buffer[] = [];
  private received = 0;

  constructor(maxBytes: number, head: boolean, timeoutMs: number, started: number, signal: AbortSignal | undefined) {
    this.maxBytes = maxBytes;
    this.bodyless = head;
    this.timeoutMs = timeoutMs;
    this.started = started;
    this.signal = signal;
    this.promise = new Promise<UpstreamResult>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.timer = setTimeout(UpstreamCall.onDeadline, timeoutMs, this);
    signal?.addEventListener('abort', this, { once: true });
  }

  private static onDeadline(this: void, call: UpstreamCall): void {
    call.fail(
      new UpstreamCallError('timeout', `The upstream did not answer within ${call.timeoutMs} ms.`, {
        upstreamStatus: call.upstreamStatus(),
      }),
    );
  }

  /** The caller's AbortSignal fired. */
  handleEvent(): void {
    this.fail(
      new UpstreamCallError('aborted', FAILURE_MESSAGES.aborted, {
        cause: this.signal?.reason,
        upstreamStatus: this.upstreamStatus(),
      }),
    );
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    // The deadline or the caller may have ended the call while it waited for a connection.
    if (this.failure !== null) {
      controller.abort(this.failure);
      return;
    }
    this.controller = controller;
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    // 1xx informational answers (103 Early Hints) precede the real one.
    if (this.settled || statusCode < 200) return;
    this.status = statusCode;
    this.headers = headers;
    // A HEAD, 204 or 304 answer has no body, whatever length it declares for the representation.
    if (this.bodyless || statusCode === 204 || statusCode === 304) return;
    const declared = headers['content-length'];
    if (typeof declared === 'string' && Number(declared) > this.maxBytes) this.fail(this.tooLarge());
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    const received = this.received + chunk.length;
    if (received > this.maxBytes) {
      this.fail(this.tooLarge());
      return;
    }
    this.received = received;
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.settled) return;
    const chunks = this.chunks;
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.received);
    const headers = this.headers ?? {};
    const contentType = headers['content-type'];
    this.finish();
    this.resolve({
      status: this.status,
      headers,
      body,
      contentType: typeof contentType === 'string' ? contentType : contentType?.[0],
      latencyMs: performance.now() - this.started,
    });
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, err: Error): void {
    if (this.settled) return;
    // undici has already torn the request down; there is nothing left to abort.
    this.controller = null;
    this.fail(classify(err, this.status));
  }

  onRequestUpgrade(_controller: Dispatcher.DispatchController, _statusCode: number, _h: unknown, socket: Duplex): void {
    socket.destroy();
    this.fail(new UpstreamCallError('protocol_error', 'The upstream switched protocols.'));
  }

  private upstreamStatus(): number | undefined {
    return this.status === 0 ? undefined : this.status;
  }

  private tooLarge(): UpstreamCallError {
    return new UpstreamCallError('too_large', `The upstream response is larger than the ${this.maxBytes}-byte limit.`, {
      upstreamStatus: this.upstreamStatus(),
      details: { limit_bytes: this.maxBytes },
    });
  }

  private fail(err: UpstreamCallError): void {
    if (this.settled) return;
    this.failure = err;
    this.finish();
    const controller = this.controller;
    if (controller !== null) {
      this.controller = null;
      // Destroys the socket mid-exchange (it cannot be reused), which also stops the upstream's writes.
      controller.abort(err);
    }
    this.reject(err);
  }

  private finish(): void {
    this.settled = true;
    clearTimeout(this.timer);
    this.signal?.removeEventListener('abort', this);
    this.chunks.length = 0;
  }
}
