import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * JSON logs on stdout. Secrets never reach a log line: the paths below are
 * censored wherever they appear in a logged object.
 */
export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { service: 'lumen' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: {
        paths: [
          'apiKey', '*.apiKey', 'webhookSecret', '*.webhookSecret', 'pollingKey', '*.pollingKey',
          'headers["x-api-key"]', '*.headers["x-api-key"]', 'headers.authorization', '*.headers.authorization',
          'secretKey', 'password',
        ],
        censor: '[redacted]',
      },
    },
    destination as pino.DestinationStream | undefined,
  );
}
