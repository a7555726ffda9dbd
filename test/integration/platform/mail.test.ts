// Mail goes out over real SMTP (captured by an in-test server) as text + HTML, or to the console outbox.
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../core/logger.js';
import { createMailer } from '../../../core/mail/mailer.js';
import { captureLogs } from '../../helpers/services.js';
import { startSmtpCapture } from '../../helpers/smtp.js';

describe('mailer', () => {
  it('delivers text and HTML over SMTP', async () => {
    const smtp = await startSmtpCapture();
    const mailer = createMailer(
      { kind: 'smtp', url: smtp.url, from: 'Market <no-reply@market.test>' },
      createLogger({ level: 'silent' }),
    );
    try {
      await mailer.send({
        to: 'Ada@Example.com',
        subject: 'Your code',
        text: 'Your code: 123456',
        html: '<p>Your code: <b>123456</b></p>',
      });
      const mail = await smtp.waitForMail('ada@example.com');
      expect(mail.from).toBe('no-reply@market.test');
      expect(mail.subject).toBe('Your code');
      expect(mail.text.trim()).toBe('Your code: 123456');
      expect(mail.html).toContain('<b>123456</b>');
    } finally {
      await mailer.close();
      await smtp.close();
    }
  });

  it('prints the mail readably for the person at the terminal, logs that it did, and keeps an outbox', async () => {
    const logs = captureLogs('info');
    let printed = '';
    const mailer = createMailer({ kind: 'console', from: 'x@y.z' }, logs.logger, {
      write: (t: string) => (printed += t),
    });
    await mailer.send({
      to: 'b@example.com',
      subject: 'Your sign-in code: 123456',
      text: 'Your code: 123456',
      html: '',
    });
    expect(mailer.outbox()).toHaveLength(1);
    // Plain lines, not a JSON string with escaped newlines (issue 22).
    expect(printed).toContain('Mail to b@example.com: Your sign-in code: 123456\n');
    expect(printed).toContain('\nYour code: 123456\n');
    expect(logs.text()).toContain('Your sign-in code: 123456'); // the subject, in the structured log
  });
});
