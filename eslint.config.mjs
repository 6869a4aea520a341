// ESLint (flat config) with typescript-eslint's recommended rules, over the TypeScript sources and tests.
// `npm run lint` runs it and prettier's check; `npm test` runs `npm run lint` first.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
    // ESLint also ignores every node_modules folder by default (plugin/node_modules after an install there).
    { ignores: ["node_modules/**", "reports/**", ".stryker-tmp/**", "**/*.js", "**/*.mjs"] },
    js.configs.recommended,
    ...tseslint.configs.recommended,
    {
        rules: {
            // Kubernetes and Envoy objects are untyped JSON here; `any` is the honest type for them.
            "@typescript-eslint/no-explicit-any": "off",
            // The dynamic provider loads child_process inside Pulumi's provider host at call time.
            "@typescript-eslint/no-require-imports": "off",
            "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
        },
    },
    {
        // chai's property assertions (`expect(x).to.exist`) are expressions by design.
        files: ["tests/**/*.ts"],
        rules: { "@typescript-eslint/no-unused-expressions": "off" },
    },
);
