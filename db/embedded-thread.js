// The embedded database's own thread (db/embedded.ts): PGlite and its pglite-socket server run here, so every
// statement (PGlite runs them synchronously, in WASM) blocks this thread's event loop, never the marketplace's: the
// gateway's answers, the control plane's pages and the Temporal worker keep their loop while a usage commit, a rollup
// or a migration runs (issue 32: no event-loop stalls in `npm start`). Plain JavaScript, so it loads the same under
// tsx, vitest and compiled code.
//
// Several clients: the all-in-one's main thread and its gateway thread (gateway/thread.ts) each hold
// a connection. PGlite is one Postgres session, so what one client sends as a unit must run as a unit: pglite-socket's
// own queue interleaves clients message by message outside explicit transactions, and another client's Parse between
// a Parse and its Bind would bind the wrong statement. SessionQueue below gives the session to one client from its
// first message until the end of its unit (a Sync, a simple Query, a startup or a Terminate, outside a transaction),
// then to the next client waiting. pglite-socket's connection handler (framing, SSL and cancel requests) is used as is.
//
// Protocol: workerData { dataDir, port }; posts { conn } once serving ("127.0.0.1:PORT") or { error } if it could not
// start; on the message 'stop' it stops the server, closes the database and posts 'stopped'.
import { Buffer } from 'node:buffer';
import net from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PGLiteSocketHandler } from '@electric-sql/pglite-socket';

/** Connections at once: the main thread's pool of one, the gateway thread's, an operator's (ops-server runs inside). */
const MAX_CONNECTIONS = 8;
/** The protocol version of a startup message (3.0), the int32 after its length. */
const PROTOCOL_3 = 196608;
const SYNC = 0x53; // 'S'
const QUERY = 0x51; // 'Q'
const TERMINATE = 0x58; // 'X'
const PARSE = 0x50; // 'P'

/** The statement name a Parse message prepares ('' for the unnamed statement). */
function parsedName(message) {
  if (message[0] !== PARSE || message.length < 6) return '';
  const end = message.indexOf(0, 5);
  return end < 0 ? '' : Buffer.from(message.buffer, message.byteOffset + 5, end - 5).toString('utf8');
}

/** A message after which the client waits for ReadyForQuery: the end of its unit of work. */
function endsUnit(message) {
  if (message.length >= 8 && new DataView(message.buffer, message.byteOffset).getInt32(4) === PROTOCOL_3) return true;
  const type = message[0];
  return type === SYNC || type === QUERY || type === TERMINATE;
}

/** pglite-socket's QueryQueueManager contract (enqueue, getQueueLength, clearQueueForHandler, clearTransactionIfNeeded). */
export class SessionQueue {
  constructor(db) {
    this.db = db;
    this.queue = [];
    this.processing = false;
    /** The client whose unit is running: only its messages run until the unit ends. */
    this.owner = null;
    /** Named statements each client prepared: the session outlives the client, they are dropped when it leaves. */
    this.named = new Map();
  }

  enqueue(handlerId, message, onData) {
    return new Promise((resolve, reject) => {
      this.queue.push({ handlerId, message, onData, resolve, reject });
      void this.processQueue();
    });
  }

  async processQueue() {
    if (this.processing) return;
    this.processing = true;
    try {
      while (this.queue.length > 0) {
        const at = this.owner === null ? 0 : this.queue.findIndex((q) => q.handlerId === this.owner);
        if (at < 0) break; // the owner's next message has not arrived yet
        const item = this.queue.splice(at, 1)[0];
        let bytes = 0;
        try {
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(item.message, {
              onRawData: (data) => {
                bytes += data.length;
                item.onData(data);
              },
            }),
          );
        } catch (err) {
          this.owner = null;
          item.reject(err);
          continue;
        }
        const name = parsedName(item.message);
        if (name) {
          if (!this.named.has(item.handlerId)) this.named.set(item.handlerId, new Set());
          this.named.get(item.handlerId).add(name);
        }
        this.owner = endsUnit(item.message) && !this.db.isInTransaction() ? null : item.handlerId;
        item.resolve(bytes);
      }
    } finally {
      this.processing = false;
    }
  }

  getQueueLength() {
    return this.queue.length;
  }

  clearQueueForHandler(handlerId) {
    this.queue = this.queue.filter((q) => {
      if (q.handlerId !== handlerId) return true;
      q.reject(new Error('Handler disconnected'));
      return false;
    });
  }

  /**
   * A client went away: end what it left open (its transaction; its named statements, which live in the one session
   * and would collide with its reconnection's), then let the others run.
   */
  async clearTransactionIfNeeded(handlerId) {
    if (this.owner === handlerId || this.db.isInTransaction()) {
      if (this.db.isInTransaction()) await this.db.exec('ROLLBACK');
      this.owner = null;
    }
    for (const name of this.named.get(handlerId) ?? []) {
      await this.db.exec(`DEALLOCATE "${name.replaceAll('"', '""')}"`).catch(() => undefined);
    }
    this.named.delete(handlerId);
    await this.processQueue();
  }
}

/** The loopback server: one pglite-socket handler per connection, all on one SessionQueue. */
function serve(db, host, listenPort) {
  const queue = new SessionQueue(db);
  const handlers = new Set();
  const server = net.createServer((socket) => {
    if (handlers.size >= MAX_CONNECTIONS) {
      socket.end();
      return;
    }
    const handler = new PGLiteSocketHandler({ queryQueue: queue, closeOnDetach: true });
    handlers.add(handler);
    const forget = () => handlers.delete(handler);
    handler.addEventListener('close', forget);
    handler.addEventListener('error', forget);
    handler.attach(socket).catch(() => {
      forget();
      socket.destroy();
    });
  });
  server.maxConnections = MAX_CONNECTIONS;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(listenPort, host, () => {
      const { port: bound } = server.address();
      resolve({
        conn: `${host}:${bound}`,
        async stop() {
          for (const h of handlers) await h.detach(true);
          handlers.clear();
          await new Promise((done) => server.close(() => done()));
        },
      });
    });
  });
}

const port = parentPort;
if (port) {
  try {
    // pg_trgm: catalog search's typo matching (Migration20261123120000_search creates the extension).
    const db = await PGlite.create(workerData.dataDir, { extensions: { pg_trgm } });
    const server = await serve(db, '127.0.0.1', workerData.port);
    port.on('message', (message) => {
      if (message !== 'stop') return;
      void (async () => {
        await server.stop();
        await db.close();
        port.postMessage('stopped');
        port.close();
      })();
    });
    port.postMessage({ conn: server.conn });
  } catch (err) {
    port.postMessage({ error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    port.close();
  }
}
