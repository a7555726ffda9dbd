// Comlink's Node adapter (comlink/dist/esm/node-adapter.mjs) ships its types as node-adapter.d.ts, which TypeScript
// does not pair with an .mjs file; this declares the same signature.
declare module 'comlink/dist/esm/node-adapter.mjs' {
  import type { Endpoint } from 'comlink';
  import type { MessagePort, Worker } from 'node:worker_threads';
  export default function nodeEndpoint(port: MessagePort | Worker): Endpoint;
}
