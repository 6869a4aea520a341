/**
 * A MODEL of Pulumi's Random provider, for the e2e tier only. It is not the Random provider.
 *
 * The Go module proxy serves no version of github.com/pulumi/pulumi-random, so on a machine that
 * has no real provider binary the stack's RandomPassword (the in-cluster Redis password) would stop
 * every scenario of the shipped dev stack before it reached the real Kubernetes provider and API
 * server. This model serves exactly that one resource type, `random:index/randomPassword:RandomPassword`,
 * through the provider protocol of the project's own @pulumi/pulumi, so those scenarios can run.
 * Everything it creates is recorded in the tier's output as made by a model; scenarios that pass
 * with it are counted apart and never as real passes. Where the real provider is in the tool cache,
 * the tier uses the real one and never this model.
 *
 * It reports version 0.0.0-model: it is never installed under a version of the real provider; the
 * tier points the project at it through Pulumi.yaml `plugins.providers[].path`.
 */
const crypto = require("node:crypto");
const { main } = require("@pulumi/pulumi/provider");

const PASSWORD = "random:index/randomPassword:RandomPassword";
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
/** Inputs whose change makes a new password (as in the real provider, every input forces a replacement). */
const INPUTS = ["length", "special", "upper", "lower", "number", "numeric", "minLower", "minUpper", "minNumeric", "minSpecial", "overrideSpecial", "keepers"];

function typeOf(urn) {
    return urn.split("::")[2].split("$").pop();
}

function password(length) {
    const bytes = crypto.randomBytes(length);
    return Array.from(bytes, (b) => ALPHABET[b % ALPHABET.length]).join("");
}

const provider = {
    version: "0.0.0-model",
    async check(urn, olds, news) {
        if (typeOf(urn) !== PASSWORD) {
            return { failures: [{ property: "", reason: `the Random provider model serves only ${PASSWORD}, not ${typeOf(urn)}` }] };
        }
        const length = news.length;
        if (!Number.isInteger(length) || length < 1) return { failures: [{ property: "length", reason: "must be a whole number of at least 1" }] };
        return { inputs: news };
    },
    async diff(id, urn, olds, news) {
        const replaces = INPUTS.filter((k) => JSON.stringify(olds[k]) !== JSON.stringify(news[k]));
        return { changes: replaces.length > 0, replaces, deleteBeforeReplace: false };
    },
    async create(urn, inputs) {
        return { id: crypto.randomUUID(), outs: { ...inputs, result: password(inputs.length), bcryptHash: "" } };
    },
    async read(id, urn, props) {
        return { id, props };
    },
    async delete() {},
};

main(provider, process.argv.slice(2)).catch((e) => {
    console.error(e);
    process.exit(1);
});
