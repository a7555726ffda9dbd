/** Accounts: register (anonymous key), signup, passwordless login, email verification, logout, me. */
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { ApiFailure, UsageError } from '../client.js';
import { deleteProfile } from '../config.js';
import { cliOf, out, showing, type Cli } from '../context.js';
import { fields, money } from '../format.js';
import { OPERATIONS as OPS } from '../operations.js';

export function accountCommands(program: Command): void {
  program
    .command('register')
    .description('create an anonymous org and API key (no email; free endpoints only) and save it to the profile')
    .action(async (_opts, cmd: Command) => {
      const cli = cliOf(cmd);
      const res = await cli.send(OPS.register, { anonymous: true });
      cli.saveProfile({ ...urls(cli), org_id: res.data.org_id, api_key: res.data.api_key });
      cli.print(res, (d) =>
        fields([
          ['org', d.org_id],
          ['api key', `${d.api_key}  (shown once; saved to the profile)`],
          ['credits', money(d.credit_cents)],
        ]),
      );
      cli.note(`Profile: ${cli.profileFile}`);
    });

  program
    .command('signup')
    .description('create an account with an email (a verification mail releases the trial credit)')
    .requiredOption('--email <email>', 'your email address')
    .option('--name <name>', 'your name')
    .option('--challenge-token <token>', 'bot-challenge token (required by production servers)')
    .action(async (opts: { email: string; name?: string; challengeToken?: string }, cmd: Command) => {
      const cli = cliOf(cmd);
      const body = { email: opts.email, name: opts.name, challenge_token: opts.challengeToken };
      const res = await cli.send(OPS.signup, { body, anonymous: true });
      const d = res.data;
      cli.saveProfile({
        ...urls(cli),
        org_id: d.account.org_id,
        api_key: d.api_key,
        session_token: d.session_token,
        email: d.account.email,
      });
      cli.print(res, () =>
        fields([
          ['org', d.account.org_id],
          ['email', d.account.email],
          ['api key', `${d.api_key}  (shown once; saved to the profile)`],
          ['credits', money(d.credit_cents)],
          [
            'withheld',
            d.starter_credits ? `${money(d.starter_credits.amount_cents)} until you verify your email` : null,
          ],
        ]),
      );
      cli.note(`Check ${d.account.email} for the verification mail, then run: svc verify-email <token>`);
    });

  program
    .command('verify-email')
    .description('verify your email with the token from the verification mail (adds billing and provider scopes)')
    .argument('<token>', 'the verification token')
    .action(
      showing(
        OPS.verifyEmail,
        (d) =>
          fields([
            ['verified', 'yes'],
            ['org', d.org_id],
            ['scopes added', d.scopes_added.join(', ')],
            ['credits', money(d.credit_cents)],
          ]),
        (token: string) => ({ body: { token }, anonymous: true }),
      ),
    );

  program
    .command('login')
    .description('sign in by email: a 6-digit code is mailed to you; type it on a terminal or pass it with --code')
    .option('--email <email>', 'your email address (default: the one in the profile)')
    .option('--code <code>', 'the 6-digit code already mailed to you (for scripts)')
    .action(async (opts: { email?: string; code?: string }, cmd: Command) => {
      const cli = cliOf(cmd);
      const email = opts.email ?? cli.profile.email;
      if (!email) throw new UsageError('give --email (no email in the profile)');
      let code = opts.code;
      if (code === undefined) {
        const sent = await cli.send(OPS.loginRequest, { body: { email }, anonymous: true });
        if (!process.stdin.isTTY) {
          // A script cannot be prompted: the code is on its way; the next run passes it with --code.
          cli.saveProfile({ ...cli.profile, ...urls(cli), email });
          cli.print(sent, (d) => `${d.message}\nThen run: svc login --email ${email} --code <code>\n`);
          return;
        }
        code = await ask(`A code was sent to ${email} if it has an account. Code: `);
      }
      const res = await cli.send(OPS.loginVerify, { body: { email, code }, anonymous: true });
      const d = res.data;
      // A key from another org must not stay beside this org's session (nor one bound elsewhere: saveProfile).
      const sameOrg = cli.profile.org_id === d.org_id;
      cli.saveProfile({
        ...urls(cli),
        org_id: d.org_id,
        email: d.user.email,
        session_token: d.session_token,
        ...(sameOrg && cli.profile.api_key ? { api_key: cli.profile.api_key } : {}),
      });
      cli.print(res, () =>
        fields([
          ['signed in', d.user.email],
          ['org', d.org_id],
          ['session expires', d.expires_at],
        ]),
      );
      cli.note(`Profile: ${cli.profileFile}`);
    });

  program
    .command('logout')
    .description('end the session on the server and clear the profile file')
    .action(async (_opts, cmd: Command) => {
      const cli = cliOf(cmd);
      // A session saved from another control plane is not sent to this one: the local profile is still cleared.
      const session = cli.savedSession();
      deleteProfile(cli.profileFile);
      if (!session) {
        if (cli.json) out(`${JSON.stringify({ ok: true, data: { signed_out: false }, meta: { request_id: null } })}\n`);
        cli.note(`No session to end; profile cleared (${cli.profileFile}).`);
        return;
      }
      try {
        const res = await cli.send(OPS.logout, { headers: { authorization: `Bearer ${session}` }, anonymous: true });
        cli.print(res, () => 'Signed out.\n');
      } catch (err) {
        // An expired session is already over: the local profile is what is left to clear.
        if (!(err instanceof ApiFailure && err.code === 'unauthenticated')) throw err;
        cli.note('The session had already ended; profile cleared.');
      }
    });

  program
    .command('me')
    .description('show your org, credits, scopes and the credential in use')
    .action(
      showing(OPS.getMe, (d) =>
        fields([
          ['org', d.org_id],
          ['kind', d.org.kind],
          ['name', d.org.name],
          ['user', d.user ? `${d.user.email} (${d.user.role}${d.user.email_verified ? ', verified' : ''})` : null],
          ['credits', money(d.credit_cents)],
          ['withheld', d.withheld_credit_cents ? money(d.withheld_credit_cents) : null],
          ['billing mode', d.org.billing_mode],
          ['suspended', d.org.suspended ? 'yes' : null],
          ['scopes', d.scopes.join(', ')],
          ['credential', d.credential.type === 'api_key' ? `API key ${d.credential.key_prefix}…` : 'session'],
        ]),
      ),
    );
}

function urls(cli: Cli) {
  return { base_url: cli.baseUrl, gateway_url: cli.gatewayUrl };
}

async function ask(prompt: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return (await rl.question(prompt)).trim();
  } finally {
    rl.close();
  }
}
