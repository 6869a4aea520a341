/**
 * `npm run explain -- ...`: an alias of `mesh-ratelimit explain ...` for the repository's own stack
 * (render/mesh-ratelimit-cli.ts); the same code, the same output.
 */
import { runCommand } from "../prove/cli";
import { explainStack } from "./stack-explain";

if (require.main === module) runCommand(["explain", ...process.argv.slice(2)], explainStack);
