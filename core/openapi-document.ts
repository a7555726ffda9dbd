/**
 * The shape of an OpenAPI document this service serves raw: GET /v1/openapi.json (3.1.0, api/openapi/document.ts) and
 * GET /v1/apis/{slug}/openapi (3.0.3, core/catalog/listings/openapi-export.ts). The top level and `info` are pinned;
 * path items and components stay open records: they are OpenAPI's own structures (operations, JSON Schemas), as
 * varied as the APIs they describe, and the OpenAPI specification defines them.
 */
import { z } from 'zod';

/** An OpenAPI object whose members the OpenAPI specification defines (a path item, a component map, …). */
const OpenApiObject = z.record(z.string(), z.unknown());

export function openApiDocumentSchema<V extends string>(version: V, description: string) {
  return z
    .object({
      openapi: z.literal(version),
      info: z.object({
        title: z.string(),
        version: z.string(),
        description: z.string().optional(),
        license: z.object({ name: z.string(), identifier: z.string().optional() }).optional(),
        'x-not-callable': z.string().optional().describe('A directory listing: not callable through the gateway.'),
      }),
      servers: z.array(
        z.object({
          url: z.string(),
          description: z.string().optional(),
          variables: z.record(z.string(), z.object({ default: z.string() })).optional(),
        }),
      ),
      security: z.array(z.record(z.string(), z.array(z.string()))).optional(),
      tags: z.array(z.object({ name: z.string(), description: z.string() })).optional(),
      paths: z.record(z.string(), OpenApiObject),
      components: z.record(z.string(), OpenApiObject),
      externalDocs: z.object({ url: z.string(), description: z.string().optional() }).optional(),
    })
    .describe(description);
}
