/**
 * The repository's `mesh-ratelimit` command (`npm run mesh-ratelimit -- ...`): the package's command
 * (prove/cli.ts), with one addition only this repository can make: `explain` without `--program`
 * explains the repository's own stack from its render (`--stack NAME` reads Pulumi.NAME.yaml), by
 * render/stack-explain.ts. With `--program`, and for `replay`, it is the package's command unchanged.
 */
import { runCommand } from "../prove/cli";
import { explainStack } from "./stack-explain";

if (require.main === module) runCommand(process.argv.slice(2), explainStack);
