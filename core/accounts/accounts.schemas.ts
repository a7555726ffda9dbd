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

// Response `data` of the account routes (what AccountsService and IdentityService return; the OpenAPI document
// shares them).
export const UserView = z.object({
  user_id: z.string(),
  email: z.string(),
  name: z.string().nullable(),
  role: z.string(),
  email_verified: z.boolean(),
});
export type UserView = z.infer<typeof UserView>;
export const RegistrationView = z.object({ org_id: z.string(), api_key: z.string(), credit_cents: z.number().int() });
export type RegistrationView = z.infer<typeof RegistrationView>;
export const MeView = z.object({
  org_id: z.string(),
  org: z.object({
    org_id: z.string(),
    kind: z.string(),
    name: z.string().nullable(),
    billing_mode: z.string(),
    suspended: z.boolean(),
    created_at: z.string(),
  }),
  credit_cents: z.number().int(),
  withheld_credit_cents: z.number().int(),
  scopes: z.array(z.string()),
  user: UserView.nullable(),
  credential: z.union([
    z.object({ type: z.literal('api_key'), key_id: z.string(), key_prefix: z.string() }),
    z.object({ type: z.literal('session'), session_id: z.string() }),
  ]),
});
export type MeView = z.infer<typeof MeView>;
export const SignupView = z.object({
  account: UserView.extend({ org_id: z.string() }),
  api_key: z.string(),
  key_id: z.string(),
  session_token: z.string(),
  session_expires_at: z.string(),
  credit_cents: z.number().int(),
  starter_credits: z.object({
    amount_cents: z.number().int(),
    status: z.literal('withheld'),
    released_by: z.literal('email_verification'),
  }),
});
export type SignupView = z.infer<typeof SignupView>;
export const VerifiedView = z.object({
  verified: z.literal(true),
  org_id: z.string(),
  user: UserView,
  scopes_added: z.array(z.string()),
  credit_cents: z.number().int(),
  withheld_credit_cents: z.number().int(),
});
export type VerifiedView = z.infer<typeof VerifiedView>;
export const AttachEmailView = z.object({ sent: z.literal(true), email: z.string(), expires_in_seconds: z.number() });
export type AttachEmailView = z.infer<typeof AttachEmailView>;
export const LoginRequestView = z.object({
  sent: z.literal(true),
  message: z.string(),
  expires_in_seconds: z.number(),
});
export type LoginRequestView = z.infer<typeof LoginRequestView>;
export const SessionView = z.object({
  session_token: z.string(),
  session_id: z.string(),
  expires_at: z.string(),
  org_id: z.string(),
  user: UserView,
});
export type SessionView = z.infer<typeof SessionView>;
export const LogoutView = z.object({ signed_out: z.literal(true) });
export type LogoutView = z.infer<typeof LogoutView>;
