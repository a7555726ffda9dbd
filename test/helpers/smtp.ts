/** An in-test SMTP server (the smtp-server package) that captures every message, parsed with postal-mime. */
import { SMTPServer } from 'smtp-server';
import PostalMime from 'postal-mime';
import type { AddressInfo } from 'node:net';
import { waitFor } from './ports.js';

export interface CapturedMail {
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string;
  raw: string;
}

export interface SmtpCapture {
  url: string;
  messages: CapturedMail[];
  /** Wait for the first message to `to` (matching `subject` when given) that arrives after `since` messages. */
  waitForMail(to: string, opts?: { subject?: RegExp; timeoutMs?: number }): Promise<CapturedMail>;
  close(): Promise<void>;
}

/** `delayMs` holds each message before accepting it, like a slow mail server. */
export async function startSmtpCapture(options: { delayMs?: number } = {}): Promise<SmtpCapture> {
  const messages: CapturedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', async () => {
        if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
        const raw = Buffer.concat(chunks).toString('utf8');
        PostalMime.parse(raw)
          .then((email) => {
            messages.push({
              from: email.from?.address ?? '',
              to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
              subject: email.subject ?? '',
              text: email.text ?? '',
              html: email.html ?? '',
              raw,
            });
            callback();
          })
          .catch((err: Error) => callback(err));
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    waitForMail(to, opts = {}) {
      const want = to.toLowerCase();
      return waitFor(
        () =>
          Promise.resolve(messages.find((m) => m.to.includes(want) && (!opts.subject || opts.subject.test(m.subject)))),
        { timeoutMs: opts.timeoutMs ?? 10_000, what: `mail to ${to}` },
      );
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
