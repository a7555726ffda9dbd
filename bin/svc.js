#!/usr/bin/env node
// Launcher for the `svc` CLI (package.json "bin"): registers tsx's loader, then runs the TypeScript entry point.
import { register } from 'tsx/esm/api';

register();
await import('../cli/svc.ts');
