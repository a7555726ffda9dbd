/** Wire shapes of the upstream subject: a listing's upstream problem (upstream-problem.ts). */
import { z } from 'zod';

export const UpstreamProblem = z
  .object({
    code: z.literal('upstream_not_allowed').describe('What consumers calling this API are answered (HTTP 503).'),
    message: z.string().describe('What is wrong, for the provider.'),
    hint: z.string().describe('How to fix it.'),
  })
  .describe("The gateway cannot reach this API's upstream under the marketplace's address policy.");
export type UpstreamProblem = z.infer<typeof UpstreamProblem>;
