/** The Koa state our middleware fills in, shared by the control plane and the agent-tool server. */
import type { DefaultContext, DefaultState, ParameterizedContext } from 'koa';
import type { Principal } from '../core/auth/scopes.js';
import type { Logger } from '../core/logger.js';

export interface AppState extends DefaultState {
  requestId: string;
  log: Logger;
  principal?: Principal;
  /** Pages: the email being signed in, to re-render the code form after an error. */
  pageEmail?: string;
  /** Pages: the name typed on the sign-up form, to re-render it after an error. */
  pageName?: string;
  /** Pages: where to send the person after signing in. */
  pageNext?: string;
  /** Pages: this response's CSRF token, so every form of one page carries the one token its cookie holds. */
  csrf?: string;
}

export type AppContext = ParameterizedContext<AppState, DefaultContext>;
