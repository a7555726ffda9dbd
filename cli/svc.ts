/** Entry point of the `svc` CLI (bin/svc.js loads it through tsx; `npm run svc -- …` runs it directly). */
import { run } from './program.js';

process.exitCode = await run(process.argv.slice(2));
