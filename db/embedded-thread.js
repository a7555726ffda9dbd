// The embedded database's own thread (db/embedded.ts): PGlite and its pglite-socket server run here, so every
// statement (PGlite runs them synchronously, in WASM) blocks this thread's event loop, never the marketplace's: the
// gateway's answers, the control plane's pages and the Temporal worker keep their loop while a usage commit, a rollup
// or a migration runs (issue 32: no event-loop stalls in `npm start`). Plain JavaScript, so it loads the same under
// tsx, vitest and compiled code.
//
// Protocol: workerData { dataDir, port }; posts { conn } once serving ("127.0.0.1:PORT") or { error } if it could not
// start; on the message 'stop' it stops the server, closes the database and posts 'stopped'.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

const port = parentPort;
if (!port) throw new Error('db/embedded-thread.js runs as a worker thread (db/embedded.ts starts it)');

try {
  // pg_trgm: catalog search's typo matching (Migration20261123120000_search creates the extension).
  const db = await PGlite.create(workerData.dataDir, { extensions: { pg_trgm } });
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: workerData.port, maxConnections: 1 });
  await server.start();
  port.on('message', (message) => {
    if (message !== 'stop') return;
    void (async () => {
      await server.stop();
      await db.close();
      port.postMessage('stopped');
      port.close();
    })();
  });
  port.postMessage({ conn: server.getServerConn() });
} catch (err) {
  port.postMessage({ error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  port.close();
}
