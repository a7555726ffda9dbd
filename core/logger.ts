/** pino logger. Secrets are redacted by path; request handlers log through a child carrying `request_id`. */
import { pino, type Logger, type DestinationStream } from 'pino';

export type { Logger };

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-svc-key"]',
  'res.headers["x-svc-key"]',
  '*.api_key',
  '*.apiKey',
  '*.token',
  '*.secret',
  '*.password',
  '*.code',
];

export function createLogger(options: { level: string; name?: string }, destination?: DestinationStream): Logger {
  return pino(
    {
      level: options.level,
      name: options.name ?? 'marketplace',
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}
