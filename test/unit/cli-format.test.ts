// The svc CLI's pure parts: money and tables for people, option parsers, the profile file, and the command tree
// (a subcommand option with a global option's name would be swallowed by the global one).
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { collectPair, parseMoney } from '../../cli/args.js';
import { buildUrl } from '../../cli/client.js';
import { profilePath, readProfile, writeProfile } from '../../cli/config.js';
import { normalizeUrl } from '../../cli/context.js';
import { chargeLine } from '../../cli/commands/call.js';
import { fields, money, priceRange, searchCount, table } from '../../cli/format.js';
import { buildProgram } from '../../cli/program.js';

describe('search count', () => {
  it('is exact below the result window and a lower bound above it (issue 33)', () => {
    expect(searchCount(5, { total: 57, total_exact: true })).toBe('5 of 57\n');
    expect(searchCount(50, { total: 10_000, total_exact: true })).toBe('50 of 10000\n');
    // An older server without total_exact: its total was exact.
    expect(searchCount(3, { total: 3 })).toBe('3 of 3\n');
    const above = searchCount(50, { total: 10_000, total_exact: false });
    expect(above).toMatch(/^50 of 10000\+ \(at least 10000; /);
    expect(above).toMatch(/refine the query/);
    expect(searchCount(0, {})).toBe('');
  });
});

describe('money', () => {
  it('prints integer cents as dollars', () => {
    expect(money(0)).toBe('$0.00');
    expect(money(5)).toBe('$0.05');
    expect(money(123)).toBe('$1.23');
    expect(money(100_000_00)).toBe('$100,000.00');
    expect(money(-5)).toBe('-$0.05');
    expect(money(null)).toBe('none');
    expect(money(undefined)).toBe('none');
  });

  it('price ranges say free at the free end', () => {
    expect(priceRange(0, 0)).toBe('free');
    expect(priceRange(5, 5)).toBe('$0.05');
    expect(priceRange(0, 5)).toBe('free-$0.05');
    expect(priceRange(3, 250)).toBe('$0.03-$2.50');
    expect(priceRange(null, null)).toBe('-');
  });

  it('reads cents, dollars and none', () => {
    expect(parseMoney('500')).toBe(500);
    expect(parseMoney('$5')).toBe(500);
    expect(parseMoney('5.00')).toBe(500);
    expect(parseMoney('$7.5')).toBe(750);
    expect(parseMoney('0')).toBe(0);
    expect(parseMoney('none')).toBeNull();
    for (const bad of ['lots', '-5', '5.001', '$', '1e3', '']) expect(() => parseMoney(bad)).toThrow(/expected cents/);
  });
});

describe('table and fields', () => {
  const rows = [
    { id: 'key_1', budget: 500, note: 'a long summary that goes on and on' },
    { id: 'key_22', budget: null, note: '' },
  ];

  it('aligns columns (money right-aligned), marks empty cells and clips long ones', () => {
    const text = table(rows, [
      { header: 'ID', value: (r) => r.id },
      { header: 'BUDGET', value: (r) => money(r.budget), align: 'right' },
      { header: 'NOTE', value: (r) => r.note, max: 12 },
    ]);
    expect(text).toBe(['ID      BUDGET  NOTE', 'key_1    $5.00  a long summ…', 'key_22    none  -', ''].join('\n'));
  });

  it('says so when there are no rows', () => {
    expect(table([], [{ header: 'ID', value: () => 'x' }], 'No keys.')).toBe('No keys.\n');
  });

  it('fields align values and leave out null ones', () => {
    expect(
      fields([
        ['org', 'org_1'],
        ['credits', money(95)],
        ['user', null],
      ]),
    ).toBe('org:      org_1\ncredits:  $0.95\n');
  });
});

describe('the gateway charge line', () => {
  it('describes a charge, a free call and a replay', () => {
    // What paid for the call, never read as a remaining balance (issue 22).
    expect(chargeLine({ cost_cents: 5, credit_applied_cents: 5, billable_cents: 0 })).toBe(
      'charged $0.05 ($0.05 paid from credits)',
    );
    expect(chargeLine({ cost_cents: 5, credit_applied_cents: 2, billable_cents: 3 })).toBe(
      'charged $0.05 ($0.02 paid from credits, $0.03 billed to your card)',
    );
    expect(chargeLine({ cost_cents: 0 })).toBe('free call: nothing charged');
    expect(chargeLine({ cost_cents: 5, replayed: true, original_request_id: 'req_1' })).toBe(
      'replay of req_1: not charged again (original cost $0.05)',
    );
    expect(chargeLine({ request_id: 'req_2' })).toBeUndefined();
  });
});

describe('arguments and URLs', () => {
  it('collects repeated k=v pairs, keeping = in values', () => {
    expect(collectPair('b=x=y', collectPair('a=1'))).toEqual([
      ['a', '1'],
      ['b', 'x=y'],
    ]);
    expect(() => collectPair('=1')).toThrow(/key=value/);
  });

  it('builds query strings from pairs and objects, dropping empty values', () => {
    expect(
      buildUrl('http://h:1/', '/v1/proxy/x/a?z=0', [
        ['q', 'a b'],
        ['q', '2'],
      ]),
    ).toBe('http://h:1/v1/proxy/x/a?z=0&q=a+b&q=2');
    expect(buildUrl('http://h:1', '/v1/search', { q: '', limit: 5, sort: undefined })).toBe(
      'http://h:1/v1/search?limit=5',
    );
  });

  it('expands :port and refuses non-http URLs', () => {
    expect(normalizeUrl(':3001', '--gateway-url')).toBe('http://127.0.0.1:3001');
    expect(normalizeUrl('https://api.example.com/', '--base-url')).toBe('https://api.example.com');
    expect(() => normalizeUrl('ftp://x', '--base-url')).toThrow(/http\(s\) URL/);
    expect(() => normalizeUrl('nope', '--base-url')).toThrow(/http\(s\) URL/);
  });
});

describe('the profile file', () => {
  it('lives at SVC_CONFIG, else under XDG_CONFIG_HOME, else ~/.config', () => {
    expect(profilePath({ SVC_CONFIG: '/tmp/p.json' })).toBe('/tmp/p.json');
    expect(profilePath({ XDG_CONFIG_HOME: '/x', HOME: '/h' })).toBe('/x/svc/config.json');
    expect(profilePath({ HOME: '/h' })).toBe('/h/.config/svc/config.json');
  });

  it('is written 0600 in a 0700 directory and read back (unknown fields dropped)', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'svc-profile-'));
    try {
      const file = path.join(dir, 'svc', 'config.json');
      expect(readProfile(file)).toEqual({});
      writeProfile(file, { api_key: 'svc_live_x', base_url: 'http://h' });
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ api_key: 'svc_live_x', base_url: 'http://h' });
      writeProfile(file, { session_token: 'sess_y' });
      expect(readProfile(file)).toEqual({ session_token: 'sess_y' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the command tree', () => {
  const all = (cmd: Command): Command[] => [cmd, ...cmd.commands.flatMap(all)];
  const program = buildProgram();

  it('has every command the requirement names, each with a description', () => {
    const names = all(program).map((c) => {
      const chain: string[] = [];
      for (let at: Command | null = c; at && at !== program; at = at.parent) chain.unshift(at.name());
      return chain.join(' ');
    });
    for (const name of [
      'register',
      'signup',
      'login',
      'logout',
      'me',
      'search',
      'categories',
      'api',
      'schema',
      'leaderboard',
      'quote',
      'call',
      'keys list',
      'keys create',
      'keys update',
      'keys revoke',
      'usage',
      'balance',
      'checkout',
      'provider apis',
      'provider create',
      'provider import',
      'provider credentials',
      'provider pricing',
      'provider verify',
      'provider publish',
      'provider unpublish',
      'provider documents',
      'provider analytics',
      'terms',
    ]) {
      expect(names).toContain(name);
    }
    for (const c of all(program)) expect(c.description(), c.name()).not.toBe('');
  });

  it('no subcommand option shares a name with a global option (the global one would take its value)', () => {
    const globals = new Set(program.options.map((o) => o.long));
    for (const c of all(program).slice(1)) {
      for (const o of c.options) expect(globals.has(o.long), `${c.name()} ${o.long}`).toBe(false);
    }
  });
});
