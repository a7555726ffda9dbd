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
  /** Messages kept by the console mailer (newest last); empty for SMTP. */
  outbox(): readonly MailMessage[];
  close(): Promise<void>;
}

class SmtpMailer implements Mailer {
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

class ConsoleMailer implements Mailer {
  readonly kind = 'console' as const;
  private readonly kept: MailMessage[] = [];

  constructor(
    private readonly logger: Logger,
    private readonly limit = 100,
  ) {}

  send(message: MailMessage): Promise<void> {
    this.kept.push(message);
    if (this.kept.length > this.limit) this.kept.shift();
    this.logger.info(
      { mail: { to: message.to, subject: message.subject } },
      `mail (not sent: no SMTP_URL)\n${message.text}`,
    );
    return Promise.resolve();
  }

  outbox(): readonly MailMessage[] {
    return this.kept;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

export function createMailer(config: MailConfig, logger: Logger): Mailer {
  return config.kind === 'smtp' ? new SmtpMailer(config.url, config.from) : new ConsoleMailer(logger);
}
