/**
 * The API tools a key installed (issue 25 item 3): `install` and `remove` write the key's set (table
 * mcp_installed_tools), `live` and `find` read it against the live catalog. Nothing about an installed tool is copied
 * but its name: its price, input schema and presence are the listing's now, so a repriced endpoint lists its new price
 * at once and an unpublished listing's (or a deleted endpoint's) tools disappear from the list and refuse calls, with
 * no write here. The set belongs to the key; an OAuth access token acts for the key the person minted when approving
 * the client (core/oauth/access-tokens.ts), so it reads and writes that key's set.
 */
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import {
  Api,
  ApiKey,
  Endpoint,
  McpInstalledTool,
  type IApi,
  type IEndpoint,
  type IMcpInstalledTool,
} from '../../db/entities/index.js';
import type { Clock } from '../clock.js';
import { NotFoundError, ValidationError } from '../errors.js';
import { effectivePrice } from '../pricing/effective-price.js';
import { toolInputSchema, toolNameFor, type ToolInputSchema } from './tool-shape.js';

/** The pub/sub channel (a key id per message) that tells every agent-tool server a key's installed tools changed. */
export const TOOLS_CHANGED_CHANNEL = 'mcp:tools-changed';

/** At most this many installed tools per key (each is a tools/list entry in the key's context). */
export const MAX_INSTALLED_PER_KEY = 100;

export interface LiveInstalledTool {
  name: string;
  api: Pick<IApi, 'id' | 'slug' | 'name'>;
  endpoint: Pick<IEndpoint, 'id' | 'method' | 'path' | 'summary'>;
  priceCentsEffective: number;
  /** What the key saw when it installed the tool. */
  installedPriceCents: number;
  /** The advertised (flat) input schema: `input.schema`. */
  inputSchema: Record<string, unknown>;
  /** Its flat and grouped schemas and where each flat argument goes (core/agent-tools/tool-args.ts reads them). */
  input: ToolInputSchema;
  /** Whether the input schema changed since the tool was installed. */
  schemaChanged: boolean;
}

export interface InstallOutcome {
  api: string;
  /** The tools of this listing the key now has (the ones it had already, then the new ones). */
  tools: LiveInstalledTool[];
  added: string[];
}

const callable = (api: IApi) => api.status === 'live' && api.source === 'provider';

/** Whether `selector` (an endpoint id, "METHOD /path", or an installed tool's name) names the endpoint. */
function selects(selector: string, endpoint: IEndpoint, toolName?: string): boolean {
  const s = selector.trim();
  if (s === endpoint.id || s === toolName) return true;
  const [method, ...rest] = s.split(/\s+/);
  return method?.toUpperCase() === endpoint.method && rest.join(' ') === endpoint.path;
}

export class InstalledToolsService {
  constructor(private readonly deps: { orm: MikroORM; clock: Clock }) {}

  /**
   * Install the endpoints of the live listing `slug` that `selectors` name (all of them when absent) as tools of the
   * key; already installed ones keep their names. (No default tool's name has `__`; every installed one does.)
   */
  async install(
    key: { keyId: string },
    slug: string,
    selectors: readonly string[] | undefined,
  ): Promise<InstallOutcome> {
    const added = await this.deps.orm.em.fork().transactional(async (em) => {
      // One writer per key at a time: names are chosen against the key's whole set.
      await em.execute('select pg_advisory_xact_lock(hashtext(?))', [`mcp_installed_tools:${key.keyId}`]);
      const api = await em.findOne(Api, { slug });
      if (!api || !callable(api)) throw new NotFoundError(`No callable live API with slug "${slug}".`);
      const endpoints = await em.find(Endpoint, { api: api.id }, { orderBy: { position: 'asc', id: 'asc' } });
      const chosen = choose(endpoints, selectors);
      const rows = await em.find(McpInstalledTool, { key: key.keyId });
      const have = new Set(rows.map((r) => r.endpoint.id));
      const fresh = chosen.filter((e) => !have.has(e.id));
      if (rows.length + fresh.length > MAX_INSTALLED_PER_KEY) {
        throw new ValidationError(
          `A key may install at most ${MAX_INSTALLED_PER_KEY} API tools (it has ${rows.length}; this adds ` +
            `${fresh.length}). Name fewer endpoints, or remove_api_tools first.`,
          { details: { field: 'endpoints', installed: rows.length, adding: fresh.length } },
        );
      }
      const taken = new Set(rows.map((r) => r.toolName));
      const now = this.deps.clock.now();
      return fresh.map((endpoint) => {
        const name = toolNameFor(api.slug, endpoint, taken);
        taken.add(name);
        em.create(McpInstalledTool, {
          key: em.getReference(ApiKey, key.keyId),
          toolName: name,
          api,
          endpoint,
          priceCents: effectivePrice(endpoint, now).price_cents_effective,
          schemaHash: toolInputSchema(endpoint).hash,
        });
        return name;
      });
    });
    const tools = (await this.live(key.keyId)).filter((t) => t.api.slug === slug);
    return { api: slug, tools, added };
  }

  /**
   * Remove the key's tools of the listing `slug` that `selectors` name (endpoint ids, "METHOD /path" or tool names;
   * all of the listing's when absent), whether or not the listing is still live. Returns the removed names.
   */
  async remove(key: { keyId: string }, slug: string, selectors: readonly string[] | undefined): Promise<string[]> {
    const em = this.deps.orm.em.fork();
    const api = await em.findOne(Api, { slug });
    if (!api) throw new NotFoundError(`No API with slug "${slug}".`);
    const rows = await em.find(McpInstalledTool, { key: key.keyId, api: api.id }, { populate: ['endpoint'] });
    const gone = selectors ? rows.filter((r) => selectors.some((s) => selects(s, r.endpoint, r.toolName))) : rows;
    if (gone.length === 0) return [];
    const names = gone.map((r) => r.toolName);
    await em.nativeDelete(McpInstalledTool, { key: key.keyId, toolName: { $in: names } });
    return names;
  }

  /** The key's installed tools whose listing is live now, in the order they were installed. */
  async live(keyId: string): Promise<LiveInstalledTool[]> {
    const em = this.deps.orm.em.fork();
    const rows = await em.find(
      McpInstalledTool,
      { key: keyId },
      { populate: ['api', 'endpoint'], orderBy: { createdAt: 'asc', toolName: 'asc' } },
    );
    return this.resolve(rows);
  }

  /** One installed tool of the key, when its listing is live now. */
  async find(keyId: string, name: string): Promise<LiveInstalledTool | undefined> {
    const em = this.deps.orm.em.fork();
    const row = await em.findOne(McpInstalledTool, { key: keyId, toolName: name }, { populate: ['api', 'endpoint'] });
    return row ? this.resolve([row])[0] : undefined;
  }

  /** The keys with a tool of the listing `slug` installed (told when that listing changes). */
  async keysWith(slug: string, em: EntityManager = this.deps.orm.em.fork()): Promise<string[]> {
    const rows = await em.execute<{ key_id: string }[]>(
      'select distinct t.key_id from mcp_installed_tools t join apis a on a.id = t.api_id where a.slug = ?',
      [slug],
    );
    return rows.map((r) => r.key_id);
  }

  private resolve(rows: IMcpInstalledTool[]): LiveInstalledTool[] {
    const now = this.deps.clock.now();
    return rows.flatMap((row) => {
      const api = row.api;
      const endpoint = row.endpoint;
      if (!callable(api)) return [];
      const input = toolInputSchema(endpoint);
      return [
        {
          name: row.toolName,
          api: { id: api.id, slug: api.slug, name: api.name },
          endpoint: { id: endpoint.id, method: endpoint.method, path: endpoint.path, summary: endpoint.summary },
          priceCentsEffective: effectivePrice(endpoint, now).price_cents_effective,
          installedPriceCents: row.priceCents,
          inputSchema: input.schema,
          input,
          schemaChanged: input.hash !== row.schemaHash,
        },
      ];
    });
  }
}

/** The endpoints `selectors` name (all when absent); a selector naming none is a validation error. */
function choose(endpoints: IEndpoint[], selectors: readonly string[] | undefined): IEndpoint[] {
  if (!selectors) return endpoints;
  const unknown = selectors.filter((s) => !endpoints.some((e) => selects(s, e)));
  if (unknown.length > 0) {
    throw new ValidationError(`No endpoint of this API matches: ${unknown.join(', ')}.`, {
      details: { field: 'endpoints', unknown },
    });
  }
  return endpoints.filter((e) => selectors.some((s) => selects(s, e)));
}
