/** Inputs of the account routes and tools (zod). Strict: unknown fields are refused, never ignored. */
import { z } from 'zod';

export const Email = z
  .string()
  .trim()
  .max(320)
  .pipe(z.email({ error: 'must be an email address' }))
  .transform((v) => v.toLowerCase());

export const SignupBody = z
  .object({
    email: Email,
    name: z.string().trim().min(1).max(100).optional(),
    challenge_token: z.string().min(1).max(4096).optional(),
  })
  .strict();
export type SignupBody = z.infer<typeof SignupBody>;

export const VerifyEmailBody = z.object({ token: z.string().min(1).max(200) }).strict();
export type VerifyEmailBody = z.infer<typeof VerifyEmailBody>;

/** POST /v1/me/email: the address an anonymous org's root key asks to attach. */
export const AttachEmailBody = z.object({ email: Email }).strict();
export type AttachEmailBody = z.infer<typeof AttachEmailBody>;

export const LoginRequestBody = z.object({ email: Email }).strict();
export type LoginRequestBody = z.infer<typeof LoginRequestBody>;

export const LoginVerifyBody = z
  .object({
    email: Email,
    code: z
      .string()
      .trim()
      .regex(/^\d{6}$/, 'must be the 6-digit code from the email'),
  })
  .strict();
export type LoginVerifyBody = z.infer<typeof LoginVerifyBody>;

/** Routes that take no input accept an empty body or `{}`; anything else is refused. */
export const EmptyBody = z.object({}).strict();
