import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../core/config.js';

describe('loadConfig', () => {
  it('chooses the embedded defaults when nothing is set', () => {
    const c = loadConfig({}, '/srv/app');
    expect(c.env).toBe('development');
    expect(c.database).toEqual({ kind: 'pglite', dataDir: '/srv/app/.data/pglite' });
    expect(c.counters).toEqual({ kind: 'memory', keyPrefix: 'svc:' });
    expect(c.temporal).toMatchObject({
      kind: 'embedded',
      port: 7233,
      uiPort: 8233,
      namespace: 'default',
      taskQueue: 'marketplace',
    });
    expect(c.mail.kind).toBe('console');
    expect(c.ports).toEqual({ api: 3000, gateway: 3001, mcp: 3002 });
    expect(c.urls).toEqual({
      // 127.0.0.1 as the README says (one host for the pages' cookies and the mail links; issue 22).
      publicBase: 'http://127.0.0.1:3000',
      gateway: 'http://127.0.0.1:3001',
      mcp: 'http://127.0.0.1:3002',
      temporalUi: 'http://localhost:8233', // the embedded dev server's UI
    });
    expect(c.mcp).toEqual({
      sessionsPerOrg: 20,
      sessionIdleMs: 30 * 86_400_000, // the spec's 30-day agent-tool session
      sessionTouchMs: 60_000,
      cacheMax: 1_000,
      cacheIdleMs: 600_000,
      personWaitMs: 300_000, // a person finishing a page opened from a URL elicitation
      allowedOrigins: [],
      allowedHosts: [],
    });
    expect(c.limits.gatewayRatePerMin).toBe(300);
    expect(c.upstreamAllowPrivate).toBe(false);
  });

  it('uses the real components when their variables are set', () => {
    const c = loadConfig({
      DATABASE_URL: 'postgres://u:p@db:5432/m',
      REDIS_URL: 'redis://cache:6379',
      TEMPORAL_ADDRESS: 'temporal:7233',
      TEMPORAL_NAMESPACE: 'prod',
      SMTP_URL: 'smtp://mail:25',
      GATEWAY_RATE_LIMIT_PER_MIN: '120',
      PUBLIC_BASE_URL: 'https://market.example.com/',
      UPSTREAM_ALLOW_PRIVATE: 'true',
    });
    expect(c.database).toEqual({ kind: 'postgres', url: 'postgres://u:p@db:5432/m', poolMax: 10 });
    expect(c.counters).toEqual({ kind: 'redis', url: 'redis://cache:6379', keyPrefix: 'svc:' });
    expect(c.temporal).toEqual({
      kind: 'remote',
      address: 'temporal:7233',
      namespace: 'prod',
      taskQueue: 'marketplace',
    });
    expect(c.mail).toEqual({ kind: 'smtp', url: 'smtp://mail:25', from: 'Marketplace <no-reply@localhost>' });
    expect(c.limits.gatewayRatePerMin).toBe(120);
    expect(c.urls.publicBase).toBe('https://market.example.com');
    expect(c.urls.temporalUi).toBeUndefined(); // a remote Temporal's UI is known only when TEMPORAL_UI_URL says so
    expect(c.upstreamAllowPrivate).toBe(true);
    expect(loadConfig({ TEMPORAL_ADDRESS: 't:7233', TEMPORAL_UI_URL: 'https://ui.example.com/' }).urls.temporalUi).toBe(
      'https://ui.example.com',
    );
  });

  it("parses the MCP server's extra origins and hosts, and refuses malformed ones", () => {
    const c = loadConfig({
      MCP_ALLOWED_ORIGINS: 'https://App.example.com, http://localhost:6274',
      MCP_ALLOWED_HOSTS: 'mcp:3002,Tools.example.com,[::1]:8080',
    });
    expect(c.mcp.allowedOrigins).toEqual(['https://app.example.com', 'http://localhost:6274']);
    expect(c.mcp.allowedHosts).toEqual(['mcp:3002', 'tools.example.com', '[::1]:8080']);
    expect(() => loadConfig({ MCP_ALLOWED_ORIGINS: 'https://app.example.com/path' })).toThrow(/MCP_ALLOWED_ORIGINS/);
    expect(() => loadConfig({ MCP_ALLOWED_HOSTS: 'two words' })).toThrow(/MCP_ALLOWED_HOSTS/);
  });

  it('treats empty strings as unset', () => {
    expect(loadConfig({ DATABASE_URL: '', REDIS_URL: '' }).database.kind).toBe('pglite');
  });

  it('lists every invalid variable in one readable error', () => {
    let error: unknown;
    try {
      loadConfig({
        DATABASE_URL: 'mysql://x',
        API_PORT: 'abc',
        GATEWAY_URL: 'ftp://a',
        UPSTREAM_ALLOW_PRIVATE: 'maybe',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    expect(message).toMatch(/^Invalid configuration:/);
    expect(message).toContain('DATABASE_URL: must be a postgres:// or postgresql:// URL');
    expect(message).toContain('API_PORT:');
    expect(message).toContain('GATEWAY_URL: must be an http(s) URL');
    expect(message).toContain('UPSTREAM_ALLOW_PRIVATE: must be true or false');
    expect((error as ConfigError).issues).toHaveLength(4);
  });

  it('requires the real components in production and refuses private upstreams there', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', UPSTREAM_ALLOW_PRIVATE: 'true' })).toThrow(
      /DATABASE_URL: required when NODE_ENV=production[\s\S]*UPSTREAM_ALLOW_PRIVATE: must not be true/,
    );
  });

  it('accepts a complete production environment', () => {
    const c = loadConfig({
      NODE_ENV: 'production',
      DATABASE_URL: 'postgresql://db/m',
      REDIS_URL: 'rediss://cache:6380',
      TEMPORAL_ADDRESS: 'temporal:7233',
      SMTP_URL: 'smtps://mail:465',
      SECRETS_KEY: 'a'.repeat(64),
      PUBLIC_BASE_URL: 'https://m.example',
      CHALLENGE_VERIFY_URL: 'https://challenges.example/siteverify',
      CHALLENGE_SECRET: 's',
    });
    expect(c.env).toBe('production');
    expect(c.secretsKey?.length).toBe(32);
  });

  it('DATABASE_READ_URL: a postgres URL beside DATABASE_URL, never alone (issue 33)', () => {
    const primary = 'postgres://u:p@db:5432/m';
    expect(loadConfig({ DATABASE_URL: primary }).database).toStrictEqual({
      kind: 'postgres',
      url: primary,
      poolMax: 10,
    });
    expect(loadConfig({ DATABASE_URL: primary, DATABASE_READ_URL: 'postgresql://u:p@replica/m' }).database).toEqual({
      kind: 'postgres',
      url: primary,
      poolMax: 10,
      readUrl: 'postgresql://u:p@replica/m',
    });
    expect(() => loadConfig({ DATABASE_URL: primary, DATABASE_READ_URL: 'mysql://replica/m' })).toThrow(
      'DATABASE_READ_URL: must be a postgres:// or postgresql:// URL',
    );
    expect(() => loadConfig({ DATABASE_READ_URL: 'postgres://replica/m' })).toThrow(
      /DATABASE_READ_URL: needs DATABASE_URL \(the primary it replicates\)/,
    );
    expect(loadConfig({ DATABASE_READ_URL: '' }).database.kind).toBe('pglite');
  });

  it('rejects a SECRETS_KEY that is not 32 bytes', () => {
    expect(() => loadConfig({ SECRETS_KEY: 'short' })).toThrow(/SECRETS_KEY: must be 32 bytes/);
  });

  it('GATEWAY_PROCESSES: 1 by default; more needs Postgres and Redis; a command-line override wins', () => {
    expect(loadConfig({}).gateway.processes).toBe(1);
    expect(() => loadConfig({ GATEWAY_PROCESSES: '2' })).toThrow(
      /GATEWAY_PROCESSES: more than one gateway process needs DATABASE_URL and REDIS_URL/,
    );
    expect(() => loadConfig({ GATEWAY_PROCESSES: '2', DATABASE_URL: 'postgres://db/m' })).toThrow(/needs REDIS_URL/);
    const shared = { DATABASE_URL: 'postgres://db/m', REDIS_URL: 'redis://cache' };
    expect(loadConfig({ ...shared, GATEWAY_PROCESSES: '4' }).gateway.processes).toBe(4);
    expect(loadConfig({ ...shared, GATEWAY_PROCESSES: '4' }, '/', { GATEWAY_PROCESSES: '2' }).gateway.processes).toBe(
      2,
    );
    expect(
      loadConfig({ ...shared, GATEWAY_PROCESSES: '4' }, '/', { GATEWAY_PROCESSES: undefined }).gateway.processes,
    ).toBe(4);
    expect(() => loadConfig({}, '/', { GATEWAY_PROCESSES: '0' })).toThrow(/GATEWAY_PROCESSES/);
  });

  it('returns a frozen object', () => {
    expect(Object.isFrozen(loadConfig({}))).toBe(true);
  });
});
