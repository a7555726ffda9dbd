// nginx as the benchmark's upstream and as the reference reverse proxy. Each instance gets its own prefix directory
// (config, pid file, error log, temp paths), runs in the foreground as our child, and has one worker process: the
// same single-core budget as the one-process Node proxy and gateway it is compared with.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findBinary, freePort, startChild, waitForHttp, type ManagedChild } from './proc.js';

/** ~100 bytes of JSON: a typical small API answer, so the numbers are about per-request overhead, not bandwidth. */
export const UPSTREAM_BODY =
  '{"id":"bench_0001","object":"quote","symbol":"ACME","price_cents":12345,"currency":"usd","ok":true}';

export interface NginxInstance {
  name: string;
  port: number;
  url: string;
  /** The master; its worker is a descendant, which the CPU accounting includes. */
  masterPid: number;
  stop(): Promise<void>;
}

export function nginxVersion(): string {
  // `nginx -v` prints "nginx version: nginx/1.22.1" to stderr.
  const out = spawnSync(findBinary('nginx'), ['-v'], { encoding: 'utf8' });
  return `${out.stdout}${out.stderr}`.trim().replace(/^nginx version: /, '') || 'unknown';
}

function mainConfig(prefix: string, httpBody: string): string {
  // `user` only matters (and is only accepted silently) when the master runs as root; as root nginx would otherwise
  // drop its worker to `nobody`, which cannot read our temp prefix.
  const user = process.getuid?.() === 0 ? 'user root;' : '';
  return `
${user}
worker_processes 1;
pid ${prefix}/nginx.pid;
error_log ${prefix}/error.log warn;
events {
  worker_connections 4096;
}
http {
  access_log off;
  # Debian's build points these at /var/lib/nginx, which a non-root run cannot create.
  client_body_temp_path ${prefix}/client_body;
  proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi;
  scgi_temp_path ${prefix}/scgi;
  # Client keep-alive without the default cap of 1000 requests per connection, so no run pays for reconnects.
  keepalive_timeout 75s;
  keepalive_requests 1000000;
${httpBody}
}
`;
}

async function startNginx(name: string, httpBody: (port: number) => string): Promise<NginxInstance> {
  const nginx = findBinary('nginx');
  const prefix = mkdtempSync(join(tmpdir(), `bench-${name}-`));
  const port = await freePort();
  const conf = join(prefix, 'nginx.conf');
  writeFileSync(conf, mainConfig(prefix, httpBody(port)));
  // -e: the error log nginx opens before it has read the config (otherwise the compiled-in /var/log/nginx path).
  const child: ManagedChild = startChild(name, nginx, [
    '-p',
    `${prefix}/`,
    '-c',
    conf,
    '-e',
    join(prefix, 'error.log'),
    '-g',
    'daemon off;',
  ]);
  // However nginx ends (stopped by us, by stopAllChildren on Ctrl-C, or crashing), its prefix goes with it.
  void child.exited.then(() => rmSync(prefix, { recursive: true, force: true }));
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${url}/`, child);
  } catch (err) {
    await child.stop();
    throw err;
  }
  return { name, port, url, masterPid: child.pid, stop: () => child.stop() };
}

/** The upstream: answers every method and path with 200 and UPSTREAM_BODY, never touching the disk. */
export function startUpstream(): Promise<NginxInstance> {
  return startNginx(
    'nginx-upstream',
    (port) => `
  server {
    listen 127.0.0.1:${port} backlog=4096;
    default_type application/json;
    location / {
      return 200 '${UPSTREAM_BODY}';
    }
  }`,
  );
}

/** The reference reverse proxy: pooled keep-alive connections to the upstream, the way nginx is deployed in front. */
export function startNginxProxy(upstreamPort: number): Promise<NginxInstance> {
  return startNginx(
    'nginx-proxy',
    (port) => `
  upstream bench_upstream {
    server 127.0.0.1:${upstreamPort};
    keepalive 64;
    keepalive_requests 1000000;
    keepalive_timeout 75s;
  }
  server {
    listen 127.0.0.1:${port} backlog=4096;
    location / {
      proxy_pass http://bench_upstream;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering on;
    }
  }`,
  );
}
