/** Every workflow the worker registers (the bundle's entry point). */
export { signupCreditsWorkflow } from './signup-credits.workflow.js';
