/** A person on the console's server-rendered pages over plain fetch: signed in with the mailed code. */
import { expect } from 'vitest';
import { codeFromMail } from './full-stack.js';
import { csrfOf, FormBrowser, type PageResponse } from './form-browser.js';
import type { SmtpCapture } from './smtp.js';

/**
 * Sign in through /login with the mailed code, as a person would, coming back to `next`; the browser then holds the
 * session cookie. `done` is the answer of the code's form (a 303).
 */
export async function signInByMail(
  base: string,
  smtp: Pick<SmtpCapture, 'waitForMail'>,
  email: string,
  next: string,
): Promise<{ browser: FormBrowser; done: PageResponse }> {
  const browser = new FormBrowser(base, 'http://leaves.invalid/');
  const login = await browser.request('GET', '/login');
  const sent = await browser.request('POST', '/login', { csrf: csrfOf(login.text), email });
  expect(sent.status, sent.text).toBe(200);
  const mail = await smtp.waitForMail(email, { subject: /sign-in code/ });
  const code = codeFromMail(mail.text);
  const done = await browser.request('POST', '/login/verify', { csrf: csrfOf(sent.text), email, code, next });
  expect(done.status, done.text).toBe(303);
  return { browser, done };
}
