/**
 * Outgoing mail. With SMTP_URL set, nodemailer delivers text + HTML over SMTP; in embedded mode each message is
 * printed to the log and kept in a small in-memory outbox (so a developer can read a login code locally).
 */
import nodemailer, { type Transporter } from 'nodemailer';
import type { MailConfig } from '../config.js';
import type { Logger } from '../logger.js';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface Mailer {
  readonly kind: 'smtp' | 'console';
  send(message: MailMessage): Promise<void>;
  /**
   * Send without making the caller wait (login codes: the response must not reveal, by its timing, whether mail
   * went out). Failures are logged; close() waits for sends in flight.
   */
  sendInBackground(message: MailMessage): void;
  /** Messages kept by the console mailer (newest last); empty for SMTP. */
  outbox(): readonly MailMessage[];
  close(): Promise<void>;
}

class SmtpMailer implements BaseMailer {
  readonly kind = 'smtp' as const;
  private readonly transport: Transporter;

  constructor(
    url: string,
    private readonly from: string,
  ) {
    this.transport = nodemailer.createTransport(url);
  }

  async send(message: MailMessage): Promise<void> {
    await this.transport.sendMail({ from: this.from, ...message });
  }

  outbox(): readonly MailMessage[] {
    return [];
  }

  close(): Promise<void> {
    this.transport.close();
    return Promise.resolve();
  }
}

class ConsoleMailer implements BaseMailer {
  readonly kind = 'console' as const;
  private readonly kept: MailMessage[] = [];

  constructor(
    private readonly logger: Logger,
    private readonly limit = 100,
    /** Where the mail itself is printed for the person at the terminal (issue 22: codes were buried in JSON lines). */
    private readonly out: { write(text: string): unknown } = process.stdout,
  ) {}

  send(message: MailMessage): Promise<void> {
    this.kept.push(message);
    if (this.kept.length > this.limit) this.kept.shift();
    this.logger.info(
      { mail: { to: message.to, subject: message.subject } },
      'mail printed below (not sent: no SMTP_URL)',
    );
    const rule = '-'.repeat(72);
    this.out.write(`\n${rule}\nMail to ${message.to}: ${message.subject}\n${rule}\n${message.text}\n${rule}\n\n`);
    return Promise.resolve();
  }

  outbox(): readonly MailMessage[] {
    return this.kept;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

type BaseMailer = Omit<Mailer, 'sendInBackground'>;

/** Adds background sending, tracked so close() can wait for it. */
function withBackground(base: BaseMailer, logger: Logger): Mailer {
  const pending = new Set<Promise<void>>();
  return {
    kind: base.kind,
    send: (m) => base.send(m),
    outbox: () => base.outbox(),
    sendInBackground(message) {
      const p = base
        .send(message)
        .catch((err: unknown) => logger.error({ err, mail: { subject: message.subject } }, 'background mail failed'))
        .finally(() => pending.delete(p));
      pending.add(p);
    },
    async close() {
      await Promise.allSettled([...pending]);
      await base.close();
    },
  };
}

export function createMailer(config: MailConfig, logger: Logger, out?: { write(text: string): unknown }): Mailer {
  const base = config.kind === 'smtp' ? new SmtpMailer(config.url, config.from) : new ConsoleMailer(logger, 100, out);
  return withBackground(base, logger);
}
