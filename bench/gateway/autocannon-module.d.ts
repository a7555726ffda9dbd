// Types for the part of autocannon 8's programmatic API that autocannon-worker.ts uses (the package ships no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  /** One connection (lib/httpClient.js). Emits 'request' each time it writes a request, 'response' per response. */
  export type Client = EventEmitter;

  export interface Options {
    url: string;
    method?: 'GET' | 'POST';
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    /** Requests per second across all connections (each connection gets its share). */
    overallRate?: number;
    /** Seconds. */
    duration?: number;
    /** Seconds before a request counts as timed out. */
    timeout?: number;
    /** Called with every connection before it sends its first request. */
    setupClient?: (client: Client) => void;
  }

  /** Milliseconds, from an integer HDR histogram (lowest discernible value 1). */
  export interface LatencyStats {
    average: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p99: number;
    p99_9: number;
    /** Samples in the histogram, including those back-filled for coordinated omission. */
    totalCount: number;
  }

  export interface Result {
    /** Seconds, as autocannon measured it. */
    duration: number;
    /** Connection errors plus timeouts. */
    errors: number;
    timeouts: number;
    /** Responses whose body did not match expectBody/verifyBody (neither is used here). */
    mismatches: number;
    /** Responses with a status outside 200-299. */
    non2xx: number;
    statusCodeStats: Record<string, { count: number }>;
    latency: LatencyStats;
    requests: { average: number; total: number; sent: number };
  }

  export interface Instance extends EventEmitter, PromiseLike<Result> {
    stop(): void;
  }

  export default function autocannon(options: Options): Instance;
}
